package remote

import (
	"fmt"
	"strings"
	"testing"
)

// ensure that the byte cap starts at 960 KiB, halves down to 64 KiB, and
// doubles back only after 20 accepted requests in a row.
func TestByteCap(t *testing.T) {
	var c ByteCap
	var got []string
	note := func(step string) { got = append(got, fmt.Sprintf("%s %d", step, c.Bytes()>>10)) }
	note("start")
	for range 6 {
		c.Shrink()
		note("shrink")
	}
	for range 19 {
		c.Accepted()
	}
	note("19 accepted")
	c.Accepted()
	note("20 accepted")
	for range 10 {
		c.Accepted()
	}
	c.Shrink()
	note("10 accepted, shrink")
	for range 19 {
		c.Accepted()
	}
	note("19 accepted")
	for i := range 20 * 5 {
		c.Accepted()
		if (i+1)%20 == 0 {
			note("20 accepted")
		}
	}
	want := []string{
		"start 960",
		"shrink 480", "shrink 240", "shrink 120", "shrink 64", "shrink 64", "shrink 64",
		"19 accepted 64",
		"20 accepted 128",
		"10 accepted, shrink 64",
		"19 accepted 64",
		"20 accepted 128", "20 accepted 256", "20 accepted 512", "20 accepted 960", "20 accepted 960",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// ensure that a chunk takes as many messages as fit the message and byte
// caps, body frame and commas included, and at least one.
func TestNextChunk(t *testing.T) {
	frame := len(`{"messages":[`) + len(`]}`)
	cases := []struct {
		name            string
		sizes           []int
		maxMsgs, maxLen int
		want            int
	}{
		{"nothing", nil, 100, 1000, 0},
		{"all fit", []int{10, 10, 10}, 100, 1000, 3},
		{"message cap", []int{1, 1, 1, 1, 1}, 3, 1000, 3},
		{"exact fit", []int{10, 10}, 100, frame + 10 + 1 + 10, 2},
		{"one byte short", []int{10, 10}, 100, frame + 10 + 1 + 9, 1},
		{"first too big goes alone", []int{5000, 1}, 100, 1000, 1},
		{"big one waits for its own request", []int{10, 5000}, 100, 1000, 1},
		{"legacy cap", make([]int, 150), ChunkMaxMessagesLegacy, ChunkStartBytes, 100},
		{"capable cap", make([]int, 1500), ChunkMaxMessagesCapable, ChunkStartBytes, 1000},
		{"zero message cap still sends one", []int{1, 1}, 0, 1000, 1},
	}
	for _, c := range cases {
		if got := NextChunk(c.sizes, c.maxMsgs, c.maxLen); got != c.want {
			t.Errorf("%s: NextChunk = %d, want %d", c.name, got, c.want)
		}
		if n := NextChunk(c.sizes, c.maxMsgs, c.maxLen); n > 1 && BatchLen(c.sizes[:n]) > c.maxLen {
			t.Errorf("%s: a chunk of %d is %d bytes, over %d", c.name, n, BatchLen(c.sizes[:n]), c.maxLen)
		}
	}
}

// ensure that a chunk is sent compressed only when it saves at least 10 %.
func TestWorthCompressing(t *testing.T) {
	cases := []struct {
		raw, compressed int
		want            bool
	}{
		{1000, 900, true},
		{1000, 901, false},
		{1000, 100, true},
		{1000, 1000, false},
		{1000, 1200, false},
		{0, 0, false},
		{10, 9, true},
		{1 << 40, 1 << 39, true},
	}
	for _, c := range cases {
		if got := WorthCompressing(c.raw, c.compressed); got != c.want {
			t.Errorf("WorthCompressing(%d, %d) = %v, want %v", c.raw, c.compressed, got, c.want)
		}
	}
}

// ensure that the capability probe's answer tells a 100-capped target from
// a 1,000-capable one, and leaves every other answer to Classify.
func TestProbeCapacity(t *testing.T) {
	cases := []struct {
		name string
		a    Answer
		want int
		ok   bool
	}{
		{"legacy", Answer{Status: 400, Body: []byte(`{"error":"too many messages: 101 (max 100)"}` + "\n")}, 100, true},
		{"capable", Answer{Status: 400, Body: []byte(`{"error":"message 0: message required"}`)}, 1000, true},
		{"bare 404", Answer{Status: 404, Body: []byte("404 page not found")}, 0, false},
		{"401", Answer{Status: 401, Body: []byte(`{"error":"unauthorized"}`)}, 0, false},
		{"other 400", Answer{Status: 400, Body: []byte(`{"error":"invalid json: x"}`)}, 0, false},
		{"proxy 400", Answer{Status: 400, Body: []byte("<html>message 0: </html>")}, 0, false},
		{"no answer", Answer{Err: TransportUnavailable}, 0, false},
	}
	for _, c := range cases {
		got, ok := ProbeCapacity(c.a)
		if got != c.want || ok != c.ok {
			t.Errorf("%s: ProbeCapacity = %d, %v, want %d, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}
