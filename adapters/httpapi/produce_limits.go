package httpapi

import (
	"net/http"
	"sync"

	"github.com/gin-gonic/gin"
)

// ProduceLimits are the produce routes' per-node limits (api.md §0.8).
type ProduceLimits struct {
	// MaxInFlightPerIdentity is http.max_produce_in_flight_per_identity:
	// produces one identity may have in flight on this node; 0 is off.
	MaxInFlightPerIdentity int
	// MaxBatchBodyBytesInFlight is http.max_batch_body_bytes_in_flight: the
	// bytes batch bodies over 1 MiB may hold at once on this node; 0 is no cap.
	MaxBatchBodyBytesInFlight int64
	// Identity names who a produce counts against (the authenticated user);
	// nil counts by the authenticated user (the client's IP address with
	// security off).
	Identity func(*gin.Context) string
	// BudgetRejected, when set, is called once per batch answered 503
	// because the budget was full (narad_http_batch_body_budget_rejections_total).
	BudgetRejected func()
}

// errBatchBudgetFull is the budget's refusal: nothing more of the body is
// read and nothing is stored; the handler adds Retry-After.
var errBatchBudgetFull = &clientError{
	status: http.StatusServiceUnavailable,
	msg:    "batch produce bodies in flight on this node are at their limit; retry",
}

// produceAdmission counts each identity's produces in flight on this node
// (http.max_produce_in_flight_per_identity). A nil admission admits all.
type produceAdmission struct {
	mu       sync.Mutex
	limit    int
	inFlight map[string]int
}

func newProduceAdmission(limit int) *produceAdmission {
	if limit <= 0 {
		return nil
	}
	return &produceAdmission{limit: limit, inFlight: map[string]int{}}
}

// produceTicket is one request's share of its identity's slots.
type produceTicket struct {
	a        *produceAdmission
	identity string
	weight   int
}

// admit takes one slot for identity, or refuses with the API's 429.
func (a *produceAdmission) admit(identity string) (*produceTicket, error) {
	t := &produceTicket{a: a, identity: identity}
	if err := t.resize(1); err != nil {
		return nil, err
	}
	return t, nil
}

// resize makes the ticket count weight slots, clamped to the limit (a batch
// counts as its message count once decoded). Refused, it keeps what it held.
func (t *produceTicket) resize(weight int) error {
	a := t.a
	if a == nil {
		return nil
	}
	weight = max(1, min(weight, a.limit))
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.inFlight[t.identity]-t.weight+weight > a.limit {
		return clientErr(http.StatusTooManyRequests,
			"too many in-flight produce requests for this identity (limit %d per node)", a.limit)
	}
	a.inFlight[t.identity] += weight - t.weight
	t.weight = weight
	return nil
}

// release gives the ticket's slots back; safe to call more than once.
func (t *produceTicket) release() {
	a := t.a
	if a == nil || t.weight == 0 {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.inFlight[t.identity] -= t.weight; a.inFlight[t.identity] <= 0 {
		delete(a.inFlight, t.identity)
	}
	t.weight = 0
}

// bodyBudget is the node's batch-body budget
// (http.max_batch_body_bytes_in_flight). A nil budget has no cap.
type bodyBudget struct {
	mu   sync.Mutex
	max  int64
	used int64
}

func newBodyBudget(maxBytes int64) *bodyBudget {
	if maxBytes <= 0 {
		return nil
	}
	return &bodyBudget{max: maxBytes}
}

// take claims n bytes if they fit.
func (b *bodyBudget) take(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > b.max {
		return false
	}
	b.used += n
	return true
}

func (b *bodyBudget) give(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= n
}

// inUse is the bytes claimed now.
func (b *bodyBudget) inUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// budgetReader passes a decoded batch body through while it holds the
// budget for it. The first batchBodyBudgetFreeBytes are free; the byte past
// them claims the whole body's share so far (the free part and one unit),
// and every later unit is claimed as the body reaches it. The budget counts
// the body as decoded, which is what the decoder buffers. Refused, it reads
// nothing more and fails with errBatchBudgetFull from then on.
type budgetReader struct {
	r       *cappedReader
	budget  *bodyBudget
	read    int64
	held    int64
	refused bool
}

// newBudgetReader claims a body declared longer than the free part before
// reading any of it, so a full budget reads nothing.
func newBudgetReader(r *cappedReader, budget *bodyBudget, declared int64) (*budgetReader, error) {
	br := &budgetReader{r: r, budget: budget}
	if declared > batchBodyBudgetFreeBytes && !br.claim() {
		return nil, errBatchBudgetFull
	}
	return br, nil
}

func (br *budgetReader) Read(p []byte) (int, error) {
	if br.refused {
		return 0, errBatchBudgetFull
	}
	if len(p) == 0 {
		return br.r.Read(p)
	}
	room := max(batchBodyBudgetFreeBytes, br.held) - br.read
	if room > 0 {
		n, err := br.r.Read(p[:min(int64(len(p)), room)])
		br.read += int64(n)
		return n, err
	}
	// At the edge of what is held: see whether the body goes on before
	// claiming for it, so a body ending here claims nothing more.
	n, err := br.r.Read(p[:1])
	if n == 0 {
		return 0, err
	}
	if !br.claim() {
		return 0, errBatchBudgetFull
	}
	br.read += int64(n)
	return n, err
}

// claim takes the next unit, and the free part with the first one.
func (br *budgetReader) claim() bool {
	n := int64(batchBodyBudgetUnitBytes)
	if br.held == 0 {
		n += batchBodyBudgetFreeBytes
	}
	if !br.budget.take(n) {
		br.refused = true
		return false
	}
	br.held += n
	return true
}

// release gives back what the body held; safe to call more than once.
func (br *budgetReader) release() {
	if br.held > 0 {
		br.budget.give(br.held)
		br.held = 0
	}
}
