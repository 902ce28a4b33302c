package httpapi

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

const msg503Budget = `{"error":"batch produce bodies in flight on this node are at their limit; retry"}` + "\n"

// countingReader counts the bytes read from it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// undeclared hides a body's length, as a chunked request does.
func undeclared(body []byte) io.Reader { return io.MultiReader(bytes.NewReader(body)) }

// ensure that while a 1.5 MiB batch holds the whole 2 MiB budget, another
// batch over 1 MiB is 503 with Retry-After: 1 and the spec's message,
// stores nothing and is counted once, whether declared (then not a byte is
// read), chunked or gzip-compressed (the budget counts the decoded body);
// a batch of exactly 1 MiB never touches the budget and is accepted; and
// the budget comes back once the held batch is answered (api.md §0.8,
// §2.13.1, §7 narad_http_batch_body_budget_rejections_total).
func TestBatchBodyBudget(t *testing.T) {
	e := newLimitEnv(t, ProduceLimits{MaxBatchBodyBytesInFlight: 2 << 20})
	big := batchOfSize(holdTag, 3<<19)
	held := e.held(t, request("", "/v1/topics/t/produce/batch", bytes.NewReader(big)))

	declared := &countingReader{r: bytes.NewReader(batchOfSize("d", 3<<19))}
	req := request("", "/v1/topics/t/produce/batch", declared)
	req.ContentLength = 3 << 19
	rec := e.serve(req)
	wantAnswer(t, rec, 503, msg503Budget)
	if ra := rec.Header().Get("Retry-After"); ra != "1" || declared.n != 0 {
		t.Fatalf("declared body: Retry-After %q, %d bytes read", ra, declared.n)
	}
	rec = e.serve(request("", "/v1/topics/t/produce/batch", undeclared(batchOfSize("u", 3<<19))))
	wantAnswer(t, rec, 503, msg503Budget)
	if ra := rec.Header().Get("Retry-After"); ra != "1" {
		t.Fatalf("chunked body: Retry-After %q", ra)
	}
	gz := request("", "/v1/topics/t/produce/batch", bytes.NewReader(gzipped(t, batchOfSize("g", 3<<19))))
	gz.Header.Set("Content-Encoding", "gzip")
	wantAnswer(t, e.serve(gz), 503, msg503Budget)
	if n := e.rejections.Load(); n != 3 {
		t.Fatalf("%d budget rejections counted, want 3", n)
	}

	wantAnswer(t, e.serve(request("", "/v1/topics/t/produce/batch", undeclared(batchOfSize("m", 1<<20)))), 202, "{\"accepted\":2}\n")
	if n := e.wal.DurableNext(); n != 2 {
		t.Fatalf("%d records stored, want only the 1 MiB batch's 2", n)
	}
	e.wal.open()
	wantAnswer(t, answer(t, held), 202, "{\"accepted\":3}\n")
	wantAnswer(t, e.serve(request("", "/v1/topics/t/produce/batch", bytes.NewReader(big))), 202, "{\"accepted\":3}\n")
	if n := e.rejections.Load(); n != 3 {
		t.Fatalf("%d budget rejections counted, want still 3", n)
	}
}

// ensure that with the default 256 MiB budget a 2 MiB batch of three
// messages is accepted and a body over 16 MiB is still 413, not 503
// (conformance 205, api.md §6.1).
func TestBatchBodyBudgetDefault(t *testing.T) {
	e := newLimitEnv(t, ProduceLimits{MaxBatchBodyBytesInFlight: 256 << 20})
	wantAnswer(t, e.serve(request("", "/v1/topics/t/produce/batch", bytes.NewReader(batchOfSize("a", 2<<20)))), 202, "{\"accepted\":3}\n")
	over := request("", "/v1/topics/t/produce/batch", undeclared(batchOfSize("a", batchBodyMaxBytes+1)))
	wantAnswer(t, e.serve(over), 413, `{"error":"request body too large"}`+"\n")
	if n := e.rejections.Load(); n != 0 {
		t.Fatalf("%d budget rejections", n)
	}
}

// ensure that a body claims the budget a megabyte at a time as it grows:
// nothing up to 1 MiB, then the whole body's megabytes rounded up, refused
// where the next megabyte does not fit (having read only what it held),
// and everything given back on release (api.md §2.13.1).
func TestBudgetReaderClaimsAsItGrows(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		name     string
		size     int
		declared int64
		held     int64
		refused  bool
	}{
		{"empty", 0, 0, 0, false},
		{"exactly_1_mib", mib, -1, 0, false},
		{"exactly_1_mib_declared", mib, mib, 0, false},
		{"one_byte_over", mib + 1, -1, 2 * mib, false},
		{"one_byte_over_declared", mib + 1, mib + 1, 2 * mib, false},
		{"exactly_2_mib", 2 * mib, -1, 2 * mib, false},
		{"two_and_a_half", 5 * mib / 2, -1, 3 * mib, false},
		{"exactly_3_mib", 3 * mib, -1, 3 * mib, false},
		{"past_the_budget", 3*mib + 1, -1, 3 * mib, true},
		{"past_the_budget_declared", 3*mib + 1, 3*mib + 1, 3 * mib, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			budget := newBodyBudget(3 * mib)
			src := &cappedReader{r: bytes.NewReader(make([]byte, c.size)), left: batchBodyMaxBytes}
			br, err := newBudgetReader(src, budget, c.declared)
			if err != nil {
				t.Fatal(err)
			}
			n, err := io.Copy(io.Discard, br)
			switch {
			case c.refused && !errors.Is(err, errBatchBudgetFull):
				t.Fatalf("read %d bytes, err %v; want the budget's refusal", n, err)
			case c.refused && n != 3*mib:
				t.Fatalf("read %d bytes before the refusal, want the 3 MiB it held", n)
			case !c.refused && (err != nil || n != int64(c.size)):
				t.Fatalf("read %d of %d bytes: %v", n, c.size, err)
			}
			if got := budget.inUse(); got != c.held {
				t.Fatalf("budget in use %d, want %d", got, c.held)
			}
			br.release()
			br.release()
			if got := budget.inUse(); got != 0 {
				t.Fatalf("budget in use %d after release", got)
			}
		})
	}
}

// ensure that a body declared over 1 MiB that does not fit is refused
// before a byte is read, and holds nothing.
func TestBudgetReaderRefusesDeclaredUpFront(t *testing.T) {
	budget := newBodyBudget(3 << 19)
	src := &countingReader{r: strings.NewReader("x")}
	if _, err := newBudgetReader(&cappedReader{r: src, left: batchBodyMaxBytes}, budget, 1<<20+1); !errors.Is(err, errBatchBudgetFull) {
		t.Fatalf("err %v", err)
	}
	if src.n != 0 || budget.inUse() != 0 {
		t.Fatalf("%d bytes read, %d held", src.n, budget.inUse())
	}
}
