package membership_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/application/membership"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// answer is one canned reply of a fake node.
type answer struct {
	a   ports.JoinAdmission
	err error
}

func admitted(status string) answer { return answer{a: ports.JoinAdmission{Status: status}} }
func hint(addr string) answer {
	return answer{err: &domain.NotLeaderError{LeaderID: "x", LeaderAddr: addr}}
}

var errDown = errors.New("fake: unreachable")

// fakeSender answers joins per address (the last scripted answer repeats;
// unknown addresses are unreachable) and records every address asked.
type fakeSender struct {
	mu      sync.Mutex
	script  map[string][]answer
	asked   []string
	request ports.JoinRequest
}

func newSender() *fakeSender { return &fakeSender{script: map[string][]answer{}} }

func (f *fakeSender) on(addr string, as ...answer) *fakeSender {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.script[addr] = as
	return f
}

func (f *fakeSender) Join(_ context.Context, addr string, req ports.JoinRequest) (ports.JoinAdmission, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, addr)
	f.request = req
	as := f.script[addr]
	if len(as) == 0 {
		return ports.JoinAdmission{}, errDown
	}
	a := as[0]
	if len(as) > 1 {
		f.script[addr] = as[1:]
	}
	return a.a, a.err
}

// lastRequest returns the request of the latest call.
func (f *fakeSender) lastRequest() ports.JoinRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.request
}

// calls returns and forgets the addresses asked so far.
func (f *fakeSender) calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.asked
	f.asked = nil
	return out
}

func (f *fakeSender) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.asked)
}

// fakeView is this node's replica as the loop sees it.
type fakeView struct {
	mu       sync.Mutex
	leader   bool
	caughtUp bool
}

func (v *fakeView) set(leader, caughtUp bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.leader, v.caughtUp = leader, caughtUp
}

func (v *fakeView) Leader() (uint64, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return 7, v.leader
}

func (v *fakeView) CaughtUp() bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.caughtUp
}

// countingClock is a fake.Clock that counts its reads.
type countingClock struct {
	*fake.Clock
	reads atomic.Int64
}

func (c *countingClock) Now() time.Time {
	c.reads.Add(1)
	return c.Clock.Now()
}

func (c *countingClock) readCount() int64 { return c.reads.Load() }

// logBuffer collects a logger's text output.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Count(l.b.String(), s)
}

type joinRig struct {
	j     *membership.Joiner
	send  *fakeSender
	view  *fakeView
	clock *countingClock
	logs  *logBuffer
}

func newJoinRig(t *testing.T, send *fakeSender, peers ...string) *joinRig {
	t.Helper()
	return newJoinRigFor(t, joinReq("n4"), send, peers...)
}

// newJoinRigFor is newJoinRig sending req.
func newJoinRigFor(t *testing.T, req ports.JoinRequest, send *fakeSender, peers ...string) *joinRig {
	t.Helper()
	r := &joinRig{send: send, view: &fakeView{}, clock: &countingClock{Clock: fake.NewClock(time.Unix(1_700_000_000, 0))}, logs: &logBuffer{}}
	r.j = membership.NewJoiner(membership.JoinerConfig{
		Sender: send, View: r.view, Clock: r.clock, Log: slog.New(slog.NewTextHandler(r.logs, nil)),
		Request: req, Peers: peers,
	})
	return r
}

// waitUntil polls cond until it holds or 10 s pass.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond) // polling, bounded by the deadline
	}
}

// deadlineSender reports how far each call's deadline lies, then answers
// unreachable.
type deadlineSender func(time.Duration)

func (f deadlineSender) Join(ctx context.Context, _ string, _ ports.JoinRequest) (ports.JoinAdmission, error) {
	if d, ok := ctx.Deadline(); ok {
		f(time.Until(d))
	}
	return ports.JoinAdmission{}, errDown
}
