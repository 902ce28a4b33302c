package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/narad/narad/domain/deadletter"
)

// redriveLetters are dead letters of orders and billing: keyed JSON, a
// JSON string, text with spaces, and binary key and payload.
var redriveLetters = []deadletter.Letter{
	{Topic: "orders", Partition: 2, Offset: 17, ReceiveCount: 5, Reason: "boom", Key: []byte("customer-42"), Payload: []byte(`{"order_id":"ord_123","note":"<a&b> \u00e9"}`)},
	{Topic: "orders", Partition: 0, Offset: 3, ReceiveCount: 1, Payload: []byte(`"a JSON string"`)},
	{Topic: "billing", Partition: 1, Offset: 9, ReceiveCount: 2, Key: []byte("k b"), Payload: []byte(" not JSON {\n")},
	{Topic: "billing", Partition: 1, Offset: 10, ReceiveCount: 2, Key: []byte{0xff, 0x00, 0xc3}, Payload: []byte{0x00, 0xff, 0x10, 0x80}},
}

// redriveBroker holds orders, billing and other (empty) and dlq with the
// dead letters spread over its partitions.
func redriveBroker(t *testing.T, letters ...deadletter.Letter) *fakeBroker {
	t.Helper()
	b := newFakeBroker(t)
	for _, n := range []string{"orders", "billing", "other", "dlq"} {
		b.addTopic(n, 3)
	}
	for i, l := range letters {
		b.putLetter("dlq", i%3, l)
	}
	return b
}

// want lists the letters' original key=payload as contents does.
func want(letters ...deadletter.Letter) []string {
	var out []string
	for _, l := range letters {
		out = append(out, fmt.Sprintf("%q=%q", l.Key, l.Payload))
	}
	slices.Sort(out)
	return out
}

func assertContents(t *testing.T, b *fakeBroker, topic string, letters ...deadletter.Letter) {
	t.Helper()
	if got, w := b.contents(topic), want(letters...); !slices.Equal(got, w) {
		t.Fatalf("%s holds\n%s\nwant\n%s", topic, strings.Join(got, "\n"), strings.Join(w, "\n"))
	}
}

func assertDLQ(t *testing.T, b *fakeBroker, acked, leased int) {
	t.Helper()
	if a, l := b.ackedCount("dlq"); a != acked || l != leased {
		t.Fatalf("dlq: acked %d leased %d, want %d %d", a, l, acked, leased)
	}
}

// ensure that redrive produces each dead letter's key and payload, byte
// for byte, to its origin, acks every one and sums up on standard output.
func TestRedriveToOrigins(t *testing.T) {
	t.Parallel()
	b := redriveBroker(t, redriveLetters...)
	r := runCLI(t, cliOpts{}, "redrive", "dlq", "--wait", "0", "-s", b.url())
	if r.code != 0 || r.stdout != "redriven 4 dead letters from dlq (to their origins), skipped 0\n" || r.stderr != "" {
		t.Fatalf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	assertContents(t, b, "orders", redriveLetters[:2]...)
	assertContents(t, b, "billing", redriveLetters[2:]...)
	assertDLQ(t, b, 4, 0)
	if got := b.lines("POST /v1/topics/orders/produce/batch"); len(got) != 1 {
		t.Fatalf("produces to orders %v, want one batch", got)
	}
}

// ensure that --to sends every dead letter to that topic, and that
// --max stops after that many, asking no more of the consume.
func TestRedriveToTopicAndMax(t *testing.T) {
	t.Parallel()
	b := redriveBroker(t, redriveLetters...)
	r := runCLI(t, cliOpts{}, "redrive", "dlq", "--to", "other", "--max", "3", "--rate", "0", "--wait", "0", "-s", b.url())
	if r.code != 0 || r.stdout != "redriven 3 dead letters from dlq (to other), skipped 0\n" {
		t.Fatalf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	if got := b.contents("other"); len(got) != 3 || len(b.contents("orders"))+len(b.contents("billing")) != 0 {
		t.Fatalf("other holds %v", got)
	}
	assertDLQ(t, b, 3, 0)
	if got := b.lines("GET /v1/topics/dlq/consume"); len(got) != 1 || !strings.Contains(got[0], "max=3") {
		t.Fatalf("consumes %v", got)
	}
	r = runCLI(t, cliOpts{}, "redrive", "dlq", "--to", "other", "--wait", "0", "-s", b.url())
	if r.code != 0 || r.stdout != "redriven 1 dead letters from dlq (to other), skipped 0\n" {
		t.Fatalf("the second run: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	assertContents(t, b, "other", redriveLetters...)
}

// ensure that a message that is not a dead letter is skipped, left
// leased, reported and counted once even when its lease lapses and it
// comes back, and that the run ends once only such messages come.
func TestRedriveSkipsWhatIsNotADeadLetter(t *testing.T) {
	t.Parallel()
	b := redriveBroker(t)
	b.put("dlq", 0, nil, []byte("hello"))
	b.put("dlq", 1, nil, []byte(`{"dead_letter":{"topic":"orders"}}`))
	b.putLetter("dlq", 2, redriveLetters[0])
	b.onConsume = func() { b.lapseLeases("dlq") }
	r := runCLI(t, cliOpts{}, "redrive", "dlq", "--rate", "0", "--wait", "0", "-s", b.url())
	if r.code != 0 || r.stdout != "redriven 1 dead letters from dlq (to their origins), skipped 2\n" {
		t.Fatalf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	if strings.Count(r.stderr, "skipped p0 @0 of dlq: not a dead letter:") != 1 ||
		strings.Count(r.stderr, "skipped p1 @0 of dlq: not a dead letter: no dead_letter or payload field") != 1 {
		t.Fatalf("stderr %q", r.stderr)
	}
	assertContents(t, b, "orders", redriveLetters[0])
	b.mu.Lock()
	defer b.mu.Unlock()
	for p, part := range b.topics["dlq"].parts {
		if len(part.acked) != 0 != (p == 2) {
			t.Fatalf("p%d acked %v", p, part.acked)
		}
	}
}

// ensure that a produce failing after its retries acks nothing and exits
// 1, and that a topic --to names that does not exist ends the run at once.
func TestRedriveProduceFailureAcksNothing(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		args []string
		rw   *rewriter
		msg  string
	}{
		"unavailable": {rw: failing(503), msg: "produce to orders: http 503: injected failure"},
		"no_such_to":  {args: []string{"--to", "gone"}, msg: "produce to gone: http 404: topic not found"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := redriveBroker(t, redriveLetters...)
			o := cliOpts{}
			if tc.rw != nil {
				o.httpClient = tc.rw.client()
			}
			r := runCLI(t, o, append([]string{"redrive", "dlq", "--wait", "0", "-s", b.url()}, tc.args...)...)
			if r.code != 1 || !strings.Contains(r.stderr, "narad: "+tc.msg) || !strings.Contains(r.stdout, "redriven 0 dead letters") {
				t.Fatalf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
			}
			assertDLQ(t, b, 0, 4)
			if got := b.lines("GET /v1/topics/dlq/consume"); len(got) != 1 {
				t.Fatalf("consumes after the failure: %v", got)
			}
		})
	}
}

// ensure that an origin that refuses a produce for good keeps its dead
// letters in place, produced to once, while the others are redriven, and
// that the run exits 1.
func TestRedriveRefusingOriginIsLeftAlone(t *testing.T) {
	t.Parallel()
	gone := deadletter.Letter{Topic: "gone", Partition: 0, Offset: 1, Payload: []byte(`{"x":1}`)}
	b := redriveBroker(t, append([]deadletter.Letter{gone}, redriveLetters...)...)
	consumes := 0
	b.onConsume = func() {
		b.lapseLeases("dlq")
		if consumes++; consumes == 2 { // one more for the refusing origin arrives
			b.putLetter("dlq", 1, gone)
		}
	}
	r := runCLI(t, cliOpts{}, "redrive", "dlq", "--rate", "0", "--wait", "0", "-s", b.url())
	if r.code != 1 || r.stdout != "redriven 4 dead letters from dlq (to their origins), skipped 0\n" ||
		!strings.Contains(r.stderr, "narad: produce of 1 dead letter(s) to gone failed: http 404: topic not found") ||
		!strings.HasSuffix(r.stderr, "narad: 2 dead letter(s) not redriven or not acked: they stay in dlq\n") {
		t.Fatalf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	if got := b.lines("POST /v1/topics/gone/produce/batch"); len(got) != 1 || consumes != 3 {
		t.Fatalf("produces to the refusing origin: %v after %d consumes", got, consumes)
	}
	assertContents(t, b, "orders", redriveLetters[:2]...)
	assertContents(t, b, "billing", redriveLetters[2:]...)
	assertDLQ(t, b, 4, 2)
}

// ensure that dead letters whose ack failed are acked, not produced again,
// when they come back in the same run.
func TestRedriveAcksWhatComesBackAfterALostAck(t *testing.T) {
	t.Parallel()
	b := redriveBroker(t, redriveLetters...)
	r := runCLI(t, cliOpts{httpClient: lostFirstAck(t, "dlq").client()}, "redrive", "dlq", "--to", "other", "--rate", "0", "--wait", "0", "-s", b.url())
	if r.code != 0 || r.stdout != "redriven 4 dead letters from dlq (to other), skipped 0\n" ||
		strings.Count(r.stderr, "it was redriven but stays in dlq") != 4 {
		t.Fatalf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	assertContents(t, b, "other", redriveLetters...)
	assertDLQ(t, b, 4, 0)
}

// ensure that progress lines go to standard error while the run waits.
func TestRedriveProgress(t *testing.T) {
	t.Parallel()
	b := redriveBroker(t, redriveLetters[:2]...)
	r := runCLI(t, cliOpts{progress: time.Millisecond}, "redrive", "dlq", "--wait", "50ms", "-s", b.url())
	if r.code != 0 || !strings.Contains(r.stderr, "redriven 2 (") || !strings.Contains(r.stderr, "/s), skipped 0\n") {
		t.Fatalf("exit %d stderr %q", r.code, r.stderr)
	}
}

// ensure that bad flags are usage errors that send nothing.
func TestRedriveUsageErrors(t *testing.T) {
	t.Parallel()
	b := redriveBroker(t)
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"no_topic":      {args: []string{}, want: "needs 1 argument(s): dead-letter-topic"},
		"negative_rate": {args: []string{"dlq", "--rate", "-1"}, want: "--rate, --max and --wait must be >= 0"},
		"negative_max":  {args: []string{"dlq", "--max", "-1"}, want: "--rate, --max and --wait must be >= 0"},
		"to_itself":     {args: []string{"dlq", "--to", "dlq"}, want: "--to names the dead-letter topic itself"},
	} {
		r := runCLI(t, cliOpts{}, append([]string{"redrive", "-s", b.url()}, tc.args...)...)
		if r.code != 2 || !strings.Contains(r.stderr, tc.want) {
			t.Fatalf("%s: exit %d stderr %q", name, r.code, r.stderr)
		}
	}
	if got := b.requests(); len(got) != 0 {
		t.Fatalf("usage errors sent %v", got)
	}
}

// fakeClock is a clock whose sleeps advance it at once.
type fakeClock struct{ now time.Time }

func (c *fakeClock) Now() time.Time { return c.now }

func (c *fakeClock) Sleep(_ context.Context, d time.Duration) error {
	c.now = c.now.Add(d)
	return nil
}

// ensure that the token bucket lets through at most rate messages a
// second after a burst of a tenth of a second's worth, batches at most
// that burst, and never waits at rate 0.
func TestRedrivePacer(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		rate, total, batch int
		elapsed            time.Duration
	}{
		"ten_per_second": {rate: 10, total: 20, batch: 1, elapsed: 1900 * time.Millisecond},
		"thousand":       {rate: 1000, total: 1000, batch: 100, elapsed: 900 * time.Millisecond},
		"three":          {rate: 3, total: 4, batch: 1, elapsed: time.Second},
		"unlimited":      {rate: 0, total: 500, batch: 100},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			start := time.Unix(1783615560, 0)
			c := &fakeClock{now: start}
			p := newPacer(tc.rate, c.Now, c.Sleep)
			for done := 0; done < tc.total; {
				n := p.batch(min(redriveBatchMax, tc.total-done))
				if n != min(tc.batch, tc.total-done) {
					t.Fatalf("batch %d, want %d", n, tc.batch)
				}
				if err := p.wait(t.Context(), n); err != nil {
					t.Fatal(err)
				}
				p.take(n)
				done += n
			}
			if got := c.now.Sub(start); got < tc.elapsed || got > tc.elapsed+time.Millisecond {
				t.Fatalf("took %v, want %v", got, tc.elapsed)
			}
		})
	}
}

// ensure that a batch that got fewer tokens' worth of messages than it
// waited for leaves the rest in the bucket.
func TestRedrivePacerKeepsUnspentTokens(t *testing.T) {
	t.Parallel()
	c := &fakeClock{now: time.Unix(1783615560, 0)}
	p := newPacer(100, c.Now, c.Sleep)
	_ = p.wait(t.Context(), 10)
	p.take(4)
	start := c.now
	_ = p.wait(t.Context(), 6)
	if c.now != start {
		t.Fatalf("waited %v with 6 tokens left", c.now.Sub(start))
	}
	_ = p.wait(t.Context(), 10)
	if got := c.now.Sub(start); got < 40*time.Millisecond || got > 41*time.Millisecond {
		t.Fatalf("waited %v for 4 more tokens, want 40ms", got)
	}
}
