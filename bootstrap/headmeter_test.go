package bootstrap

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
)

// meterTestMaxBytes is the cap of the meter tests that are not about it.
const meterTestMaxBytes = 1 << 20

// feedSplit feeds b to m in pieces of size n and returns how many bytes
// lay within the cap.
func feedSplit(m *headMeter, b []byte, n int) int {
	kept := 0
	for len(b) > 0 {
		k := min(n, len(b))
		got := m.feed(b[:k])
		kept += got
		if got < k {
			return kept
		}
		b = b[k:]
	}
	return kept
}

func atHeadStart(m *headMeter) bool { return m.state == meterHead && m.msg.bytes == 0 }

// requestsAsSent are requests as Go's client writes them: a declared body,
// a chunked body with a trailer, no body, and one with a large header.
func requestsAsSent(t *testing.T) [][]byte {
	t.Helper()
	build := func(body io.Reader, length int64, edit func(*http.Request)) []byte {
		req, err := http.NewRequest(http.MethodPost, "http://narad/v1/topics/t/produce", body)
		if err != nil {
			t.Fatal(err)
		}
		req.ContentLength = length
		if edit != nil {
			edit(req)
		}
		var b bytes.Buffer
		if err := req.Write(&b); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	return [][]byte{
		build(strings.NewReader("hello"), 5, nil),
		build(io.MultiReader(strings.NewReader(strings.Repeat("c", 70_000))), -1, func(r *http.Request) {
			r.Trailer = http.Header{"X-Sum": {"1"}}
		}),
		build(nil, 0, func(r *http.Request) { r.Method = http.MethodGet }),
		build(strings.NewReader("{}"), 2, func(r *http.Request) { r.Header.Set("X-Big", strings.Repeat("b", 60_000)) }),
		[]byte("POST /p HTTP/1.0\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\nabc"), // TE ignored on 1.0
		[]byte("POST /p HTTP/1.1\nHost: n\ncontent-length:  2 \n\nok"),                           // bare LF, lower case, spaces
		[]byte("POST /p HTTP/1.1\r\nHost: n\r\nTransfer-Encoding: Chunked\r\n\r\n1;a=b\r\nx\r\n0\r\n\r\n"),
	}
}

// ensure that the meter finds the start of every header block on a
// connection carrying requests one after the other, however the bytes
// arrive, and never goes blind on them.
func TestHeadMeterFollowsFraming(t *testing.T) {
	reqs := requestsAsSent(t)
	for _, split := range []int{1, 2, 3, 7, 100, 4096, 1 << 20} {
		m := newHeadMeter(meterTestMaxBytes)
		for i, r := range reqs {
			if kept := feedSplit(m, r, split); kept != len(r) || !atHeadStart(m) {
				t.Fatalf("split %d, request %d: kept %d of %d, state %d, head %d bytes", split, i, kept, len(r), m.state, m.msg.bytes)
			}
		}
	}
}

// ensure that a header block of exactly the cap passes and the byte after
// it is refused, at the start of a connection and after a body.
func TestHeadMeterCapBoundary(t *testing.T) {
	const maxBytes = 4096
	block := func(size int) []byte {
		const start, end = "GET / HTTP/1.1\r\nX-Pad: ", "\r\n\r\n"
		return []byte(start + strings.Repeat("p", size-len(start)-len(end)) + end)
	}
	prior := []byte("POST /p HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc")
	for _, before := range [][]byte{nil, prior} {
		for _, split := range []int{1, 5, 1 << 16} {
			m := newHeadMeter(maxBytes)
			if kept := feedSplit(m, append(bytes.Clone(before), block(maxBytes)...), split); kept != len(before)+maxBytes || !atHeadStart(m) {
				t.Fatalf("a block of exactly the cap: kept %d, state %d", kept, m.state)
			}
			m = newHeadMeter(maxBytes)
			if kept := feedSplit(m, append(bytes.Clone(before), block(maxBytes+1)...), split); kept != len(before)+maxBytes || !m.over() {
				t.Fatalf("a block one byte over: kept %d, state %d", kept, m.state)
			}
		}
	}
}

// ensure that after an oversized block the meter hands out bounded filler
// without a newline, so net/http's own check is what answers.
func TestHeadMeterFillerIsBounded(t *testing.T) {
	m := newHeadMeter(16)
	if kept := m.feed([]byte("GET /aaaaaaaaaaaaaaaa HTTP/1.1\r\n")); kept != 16 {
		t.Fatalf("kept %d", kept)
	}
	total, buf := 0, make([]byte, 4096)
	for {
		n, err := m.fill(buf)
		if bytes.IndexByte(buf[:n], '\n') >= 0 {
			t.Fatal("filler ends the line")
		}
		total += n
		if err != nil {
			break
		}
	}
	if total != 16+overflowFillMarginBytes {
		t.Fatalf("filler of %d bytes", total)
	}
}

// ensure that a framing the meter cannot follow, or one net/http refuses
// and closes on, makes the meter stop counting instead of guessing.
func TestHeadMeterGoesBlindOnDoubtfulFraming(t *testing.T) {
	for name, stream := range map[string]string{
		"two lengths":            "POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n",
		"bad length":             "POST / HTTP/1.1\r\nContent-Length: +3\r\n\r\n",
		"empty length":           "POST / HTTP/1.1\r\nContent-Length:\r\n\r\n",
		"gzip encoding":          "POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n",
		"two encodings":          "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
		"folded length":          "POST / HTTP/1.1\r\nContent-Length: 3\r\n 4\r\n\r\n",
		"long length":            "POST / HTTP/1.1\r\nContent-Length: " + strings.Repeat("0", meterLineKeptBytes) + "3\r\n\r\n",
		"chunk line bare LF":     "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1\nx\r\n",
		"chunk data not CRLF":    "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nxy\r\n",
		"chunk size not hex":     "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nz\r\n",
		"chunk size too large":   "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n8000000000000000\r\n",
		"unicode-folded chunked": "POST / HTTP/1.1\r\nTransfer-Encoding: chun\u212aed\r\n\r\n",
	} {
		m := newHeadMeter(meterTestMaxBytes)
		if m.feed([]byte(stream)); m.state != meterBlind {
			t.Errorf("%s: state %d, want blind", name, m.state)
		}
	}
}

// FuzzHeadMeterAgreesWithNetHTTP checks that wherever net/http finishes
// reading a request (head and whole body), the meter is at the start of the
// next header block or has stopped counting: it never counts a body as a
// header block, nor a header block as a body.
func FuzzHeadMeterAgreesWithNetHTTP(f *testing.F) {
	for _, r := range []string{
		"POST /p HTTP/1.1\r\nHost: n\r\nContent-Length: 5\r\n\r\nhelloGET / HTTP/1.1\r\nHost: n\r\n\r\n",
		"POST /p HTTP/1.0\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\nabcGET / HTTP/1.0\r\n\r\n",
		"POST /p HTTP/1.1\nHost: n\ncontent-length:  2 \n\nokGET / HTTP/1.1\r\nHost: n\r\n\r\n",
		"POST /p HTTP/1.1\r\nHost: n\r\nTransfer-Encoding: Chunked\r\n\r\n1;a=b\r\nx\r\n0\r\n\r\nGET / HTTP/1.1\r\nHost: n\r\n\r\n",
	} {
		f.Add([]byte(r), uint8(3))
	}
	f.Add([]byte("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\nA: b\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n"), uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, split uint8) {
		m := newHeadMeter(meterTestMaxBytes)
		fed := 0
		for _, end := range requestEnds(data) {
			feedSplit(m, data[fed:end], int(split)+1)
			fed = end
			if m.state != meterBlind && !atHeadStart(m) {
				t.Fatalf("net/http finished a request at byte %d; meter state %d, head %d bytes", end, m.state, m.msg.bytes)
			}
		}
	})
}

// FuzzHeadMeterPiecesAgree checks that the meter ends in the same place
// whether the client's bytes arrive one at a time or in pieces of any size:
// it takes a line up to its line feed at once, so a piece boundary inside a
// line, a request line's version or the cap must not change what it counts.
func FuzzHeadMeterPiecesAgree(f *testing.F) {
	f.Add([]byte("POST /p HTTP/1.1\r\nHost: n\r\nContent-Length: 5\r\n\r\nhelloGET / HTTP/1.0\r\n\r\n"), uint8(7), uint8(40))
	f.Add([]byte("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\nA: b\r\n\r\n"), uint8(3), uint8(255))
	f.Add([]byte("GET /aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa HTTP/1.1\r\r\r\n\r\n"), uint8(9), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, split, capBytes uint8) {
		maxBytes := 16 + int64(capBytes)*4
		one, some := newHeadMeter(maxBytes), newHeadMeter(maxBytes)
		keptOne, keptSome := feedSplit(one, data, 1), feedSplit(some, data, int(split)+1)
		if keptOne != keptSome || !sameMeter(one, some) {
			t.Fatalf("byte by byte: kept %d, %+v\nin pieces of %d: kept %d, %+v", keptOne, one, int(split)+1, keptSome, some)
		}
	})
}

// sameMeter compares what two meters know, ignoring the stale bytes past
// the current line.
func sameMeter(a, b *headMeter) bool {
	return a.state == b.state && a.left == b.left && a.fillLeft == b.fillLeft && a.msg == b.msg &&
		a.line.long == b.line.long && a.line.tail == b.line.tail && bytes.Equal(a.line.raw(), b.line.raw())
}

// requestEnds are the offsets in data where net/http finished reading each
// request it read whole.
func requestEnds(data []byte) []int {
	src := &countingReader{r: bytes.NewReader(data)}
	br := bufio.NewReader(src)
	var ends []int
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return ends
		}
		_, err = io.Copy(io.Discard, req.Body)
		req.Body.Close()
		if err != nil {
			return ends
		}
		ends = append(ends, src.n-br.Buffered())
	}
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// BenchmarkHeadMeter measures the meter on requests as Go's client sends
// them: a 1 KiB produce, one after the other on one connection.
func BenchmarkHeadMeter(b *testing.B) {
	req, err := http.NewRequest(http.MethodPost, "http://narad:7942/v1/topics/orders/produce?key=k", bytes.NewReader(make([]byte, 1024)))
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/octet-stream")
	req.Header.Set("Authorization", "Basic YWxpY2U6c2VjcmV0")
	var wire bytes.Buffer
	if err := req.Write(&wire); err != nil {
		b.Fatal(err)
	}
	m := newHeadMeter(64 << 10)
	b.SetBytes(int64(wire.Len()))
	b.ReportAllocs()
	for b.Loop() {
		if m.feed(wire.Bytes()) != wire.Len() || !atHeadStart(m) {
			b.Fatal("lost the framing")
		}
	}
}
