package fake

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/narad/narad/ports"
)

// ErrFakeHasher is what a call made to fail by FailNext returns.
var ErrFakeHasher = errors.New("fake hasher: failure")

// fakeHashPrefix starts every hash the fake makes.
const fakeHashPrefix = "fake:"

// fakePasswordMaxBytes mirrors bcrypt's input limit.
const fakePasswordMaxBytes = 72

var _ ports.PasswordHasher = (*Hasher)(nil)

// Hasher is a fast, deterministic ports.PasswordHasher for use-case tests:
// a hash is "fake:" + the hex SHA-256 of the password, so one password
// always hashes the same (FakeHash computes it). Knobs: SetCost makes every
// call take that long, FailNext makes the next calls fail, Block holds
// Matches calls at a gate (Step lets one through), and Matches calls are
// counted and recorded. Safe for concurrent use.
type Hasher struct {
	mu       sync.Mutex
	cost     time.Duration
	failNext int
	gate     chan struct{} // nil: Matches answers at once
	calls    []string      // the hash of every Matches call, in arrival order
	inFlight int
	most     int
}

// NewHasher returns a hasher with no cost, no failure and no gate.
func NewHasher() *Hasher { return &Hasher{} }

// FakeHash is the hash the fake makes of password.
func FakeHash(password []byte) []byte {
	sum := sha256.Sum256(password)
	return []byte(fakeHashPrefix + hex.EncodeToString(sum[:]))
}

// Hash returns FakeHash(password) after the simulated cost. Errors: a
// password outside 1..72 bytes, ctx.Err(), ErrFakeHasher.
func (h *Hasher) Hash(ctx context.Context, password []byte) ([]byte, error) {
	if len(password) == 0 || len(password) > fakePasswordMaxBytes {
		return nil, fmt.Errorf("fake hasher: %d-byte password outside 1..%d", len(password), fakePasswordMaxBytes)
	}
	if err := h.begin(ctx); err != nil {
		return nil, err
	}
	return FakeHash(password), nil
}

// Matches reports whether hash is FakeHash(password): it is counted, waits
// at the gate, then takes the simulated cost. A hash the fake did not make
// is an error, as bcrypt refuses a malformed one.
func (h *Hasher) Matches(ctx context.Context, hash, password []byte) (bool, error) {
	h.mu.Lock()
	h.calls = append(h.calls, string(hash))
	h.inFlight++
	h.most = max(h.most, h.inFlight)
	gate := h.gate
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		h.inFlight--
		h.mu.Unlock()
	}()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return false, fmt.Errorf("fake hasher: at the gate: %w", ctx.Err())
		}
	}
	if err := h.begin(ctx); err != nil {
		return false, err
	}
	if !bytes.HasPrefix(hash, []byte(fakeHashPrefix)) {
		return false, fmt.Errorf("fake hasher: malformed hash of %d bytes", len(hash))
	}
	return bytes.Equal(hash, FakeHash(password)), nil
}

// begin checks ctx and a pending failure, then spends the cost (like
// bcrypt, without looking at ctx once started).
func (h *Hasher) begin(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("fake hasher: %w", err)
	}
	h.mu.Lock()
	cost, fail := h.cost, h.failNext > 0
	if fail {
		h.failNext--
	}
	h.mu.Unlock()
	if fail {
		return ErrFakeHasher
	}
	if cost > 0 {
		time.Sleep(cost) // the simulated CPU time of one call
	}
	return nil
}

// SetCost makes every later Hash and Matches take d.
func (h *Hasher) SetCost(d time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.cost = d
}

// FailNext makes the next n calls (Hash or Matches) fail with ErrFakeHasher.
func (h *Hasher) FailNext(n int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.failNext = n
}

// Block holds every later Matches call at a gate until Step lets it through
// or Unblock opens the gate (or the call's context ends).
func (h *Hasher) Block() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.gate = make(chan struct{})
}

// Step lets exactly one call held by Block through, waiting for one to
// arrive if none is held yet. Only between Block and Unblock.
func (h *Hasher) Step() {
	h.mu.Lock()
	gate := h.gate
	h.mu.Unlock()
	if gate != nil {
		gate <- struct{}{}
	}
}

// Unblock opens the gate for every held and later call.
func (h *Hasher) Unblock() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.gate != nil {
		close(h.gate)
		h.gate = nil
	}
}

// MatchesCalls counts Matches calls so far.
func (h *Hasher) MatchesCalls() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.calls)
}

// MatchedHashes returns the hash argument of every Matches call, in arrival
// order (a FakeHash names its password; it is no secret).
func (h *Hasher) MatchedHashes() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.calls...)
}

// InFlight is the Matches calls running now (held at the gate included).
func (h *Hasher) InFlight() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.inFlight
}

// MostInFlight is the most Matches calls that ever ran at once.
func (h *Hasher) MostInFlight() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.most
}
