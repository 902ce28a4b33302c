package shipping

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/narad/narad/application/fanout"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/remote"
	"github.com/narad/narad/ports"
)

// Ship sends one slab of c's parent partition to the target (internals.md
// §7.2): each lane's records go in order, one request after another, the
// lanes side by side; it returns nil once every lane's records were
// accepted or skipped. A lane that must wait and cannot hold its records
// within remotes.max_held_bytes ends the call with fanout.ErrReread: the
// cursor reads the slab again later and only what the target lacks goes.
func (s *Shipper) Ship(ctx context.Context, c fanout.RemoteCursor, recs []domain.Record) error {
	cs := s.cursor(c)
	l, _, err := s.readLink(c)
	if err != nil {
		return err
	}
	lanes := remote.SplitLanes(recs, int(max(l.stub.Remote.Lanes, 1)))
	errs := make([]error, len(lanes))
	var wg sync.WaitGroup
	for i, idx := range lanes {
		todo := s.unsent(cs, i, recs, idx)
		if len(todo) == 0 {
			continue
		}
		wg.Go(func() { errs[i] = s.runLane(ctx, c, cs, i, todo) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		if errors.Is(err, fanout.ErrReread) {
			s.d.Metrics.Reread()
			return fanout.ErrReread
		}
		return err
	}
	cs.mu.Lock()
	clear(cs.progress)
	cs.blockedAt = -1
	cs.mu.Unlock()
	return nil
}

// unsent returns lane i's records the target has not accepted yet.
func (s *Shipper) unsent(cs *cursorState, i int, recs []domain.Record, idx []int) []domain.Record {
	cs.mu.Lock()
	done, seen := cs.progress[i]
	cs.mu.Unlock()
	out := make([]domain.Record, 0, len(idx))
	for _, k := range idx {
		if !seen || recs[k].Offset > done {
			out = append(out, recs[k])
		}
	}
	return out
}

// lane is one lane's run over one slab.
type lane struct {
	s      *Shipper
	c      fanout.RemoteCursor
	cs     *cursorState
	i      int
	recs   []domain.Record
	force  []bool // send as base64: the one retry of a refused raw payload
	limit  int    // at most this many records in the next request (0 = no limit)
	held   int64  // bytes of the budget this lane holds
	copied bool
}

func (s *Shipper) runLane(ctx context.Context, c fanout.RemoteCursor, cs *cursorState, i int, recs []domain.Record) error {
	ln := &lane{s: s, c: c, cs: cs, i: i, recs: recs, force: make([]bool, len(recs))}
	defer func() { s.held.give(ln.held) }()
	cs.mu.Lock()
	for len(cs.lanes) <= i {
		cs.lanes = append(cs.lanes, laneState{})
	}
	cs.mu.Unlock()
	for len(ln.recs) > 0 {
		if err := ln.step(ctx); err != nil {
			return err
		}
	}
	return nil
}

// step sends one request, or waits for the link, and acts on the answer.
// The link (and with it the remote's client) is read after the gate
// admitted the request: a password changed while the lane waited is the
// one the request carries.
func (ln *lane) step(ctx context.Context) error {
	s := ln.s
	l, rs, probe, err := ln.admitted(ctx)
	if err != nil || rs == nil {
		return err
	}
	if ln.skipHead(l) {
		ln.abandon(rs, probe)
		return nil
	}
	n, body := ln.chunk(rs)
	a, err := ln.send(ctx, rs, l, body)
	if ctx.Err() != nil {
		ln.abandon(rs, probe)
		return ctx.Err()
	}
	if err == nil {
		s.d.Metrics.Bytes(l.remote.Name, len(body), a.WireBytes)
		if a.ConnectTime > 0 {
			rs.mu.Lock()
			rs.rtt = a.ConnectTime
			rs.mu.Unlock()
		}
	}
	v := remote.Classify(answerOf(a, err), a.Compressed).Within(n)
	ln.count(l, a, err, v, n)
	return ln.act(ctx, rs, l, v, n, a.Status)
}

// admitted waits until the link may send and the remote's gate admits a
// request, and returns the link as it is then; rs nil means the lane
// waited a poll interval for a link that cannot send (paused, remote
// missing, credential unreadable) and should look again.
func (ln *lane) admitted(ctx context.Context) (link, *remoteState, bool, error) {
	s := ln.s
	for {
		l, st, err := s.readLink(ln.c)
		if err != nil {
			return l, nil, false, err
		}
		if st != remote.Running {
			s.setState(ln.c, ln.cs, st, 0)
			return l, nil, false, ln.wait(ctx, pollInterval)
		}
		rs := s.remoteState(l.remote)
		s.noteCredential(rs, ln.cs, l)
		rs.mu.Lock()
		ok, probe, wait := rs.gate.Admit(s.d.Clock.Now())
		_, reason := rs.gate.Closed()
		rs.mu.Unlock()
		if ok {
			return l, rs, probe, nil
		}
		s.setState(ln.c, ln.cs, reason, 0)
		if err := ln.wait(ctx, min(wait, pollInterval)); err != nil {
			return l, nil, false, err
		}
	}
}

// abandon gives back a probe that got no answer to classify.
func (ln *lane) abandon(rs *remoteState, probe bool) {
	if probe {
		rs.mu.Lock()
		rs.gate.Abandon()
		rs.mu.Unlock()
	}
}

// skipHead drops the lane's first record when an admin skipped its
// offset; true when it did.
func (ln *lane) skipHead(l link) bool {
	off := ln.recs[0].Offset
	for _, p := range l.stub.Remote.Skip {
		if p.Partition == ln.c.Partition && slices.Contains(p.Offsets, off) {
			ln.s.d.Metrics.Skipped(ln.c.Parent, ln.c.Child, 1)
			ln.s.d.Log.Warn("remote child skipped a record an admin let go", "parent", ln.c.Parent,
				"partition", ln.c.Partition, "child", ln.c.Child, "offset", off)
			ln.accepted(1)
			return true
		}
	}
	return false
}

// chunk encodes the next request: as many of the lane's next records as
// the target takes, the lane's byte cap and any limit allow.
func (ln *lane) chunk(rs *remoteState) (int, []byte) {
	rs.mu.Lock()
	maxMessages := remote.ChunkMaxMessagesLegacy
	if rs.capable1000 {
		maxMessages = remote.ChunkMaxMessagesCapable
	}
	rs.mu.Unlock()
	if ln.limit > 0 {
		maxMessages = min(maxMessages, ln.limit)
	}
	ln.cs.mu.Lock()
	byteCap := ln.cs.lanes[ln.i].cap.Bytes()
	ln.cs.mu.Unlock()
	count := min(len(ln.recs), maxMessages)
	sizes := make([]int, count)
	for k := range count {
		sizes[k] = remote.MessageLen(ln.recs[k].Key, ln.recs[k].Payload, ln.force[k])
	}
	n := remote.NextChunk(sizes, maxMessages, byteCap)
	msgs := make([]remote.Message, n)
	for k := range n {
		msgs[k] = remote.Message{Key: ln.recs[k].Key, Payload: ln.recs[k].Payload, ForceBase64: ln.force[k]}
	}
	return n, remote.AppendBatch(make([]byte, 0, remote.BatchLen(sizes[:n])), msgs)
}

// send posts body within one of the remote's request slots.
func (ln *lane) send(ctx context.Context, rs *remoteState, l link, body []byte) (ports.RemoteAnswer, error) {
	slots := rs.slotsFor(l.remote.Limits.MaxInFlight)
	waited := time.Now()
	select {
	case slots <- struct{}{}:
	case <-ctx.Done():
		return ports.RemoteAnswer{}, ctx.Err()
	}
	defer func() { <-slots }()
	sent := time.Now()
	ln.s.d.Metrics.SlotWaitSeconds(l.remote.Name, sent.Sub(waited).Seconds())
	defer func() { ln.s.d.Metrics.RequestSeconds(l.remote.Name, time.Since(sent).Seconds()) }()
	path := "/v1/topics/" + url.PathEscape(l.stub.Remote.Topic) + "/produce/batch"
	rs.mu.Lock()
	compress := l.remote.Limits.Compression == "zstd" && !rs.zstdOff
	rs.mu.Unlock()
	return l.client.Do(ctx, ports.RemoteRequest{Method: http.MethodPost, Path: path, Body: body, Compress: compress})
}

// slotsFor returns the remote's request slots, resized when max_in_flight
// changed (requests in flight finish on the old ones).
func (rs *remoteState) slotsFor(size int32) chan struct{} {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.slots == nil || rs.slotsSize != size {
		rs.slots, rs.slotsSize = make(chan struct{}, max(size, 1)), size
	}
	return rs.slots
}

// answerOf turns a client's answer or error into the classifier's input.
func answerOf(a ports.RemoteAnswer, err error) remote.Answer {
	switch {
	case err == nil:
		return remote.Answer{Status: a.Status, Body: a.Body, RetryAfter: a.RetryAfter}
	case errors.Is(err, domain.ErrDestinationRefused):
		return remote.Answer{Err: remote.TransportDestinationRefused}
	case errors.Is(err, domain.ErrRemoteTLS):
		return remote.Answer{Err: remote.TransportTLSFailed}
	}
	return remote.Answer{Err: remote.TransportUnavailable}
}

// count records the request's metrics.
func (ln *lane) count(l link, a ports.RemoteAnswer, err error, v remote.Verdict, n int) {
	code := "error"
	if err == nil {
		code = strconv.Itoa(a.Status)
	}
	m := ln.s.d.Metrics
	m.Request(l.remote.Name, code)
	if v.Action != remote.Committed {
		m.Failed(l.remote.Name, v.State.String())
	}
	if v.Action == remote.RetryLane {
		m.Resent(l.remote.Name, n)
	}
}

// accepted drops the lane's first n records: the target holds them (or an
// admin skipped them); the cursor's progress remembers the last.
func (ln *lane) accepted(n int) {
	last := ln.recs[n-1].Offset
	ln.recs, ln.force = ln.recs[n:], ln.force[n:]
	ln.cs.mu.Lock()
	ln.cs.progress[ln.i] = last
	if ln.cs.blockedAt >= 0 && ln.cs.blockedAt <= last {
		ln.cs.blockedAt = -1
	}
	ln.cs.mu.Unlock()
}

// wait holds the lane for d, first copying its records off the parent
// log into the node's held budget; when the budget cannot take them the
// lane gives up with fanout.ErrReread.
func (ln *lane) wait(ctx context.Context, d time.Duration) error {
	if !ln.copied {
		var size int64
		for _, r := range ln.recs {
			size += int64(len(r.Key) + len(r.Payload))
		}
		if !ln.s.held.take(size) {
			ln.s.d.Log.Error("remote child cannot hold its unsent records within remotes.max_held_bytes; it reads them again later",
				"parent", ln.c.Parent, "partition", ln.c.Partition, "child", ln.c.Child, "bytes", size)
			if !ln.s.d.Sleep(ctx, d) {
				return ctx.Err()
			}
			return fmt.Errorf("shipping: lane %d of %s/%d → %s: %w", ln.i, ln.c.Parent, ln.c.Partition, ln.c.Child, fanout.ErrReread)
		}
		ln.held, ln.copied = size, true
		for k, r := range ln.recs {
			ln.recs[k] = domain.Record{Offset: r.Offset, Key: bytes.Clone(r.Key), Payload: bytes.Clone(r.Payload), CommittedAtMs: r.CommittedAtMs}
		}
	}
	if !ln.s.d.Sleep(ctx, d) {
		return ctx.Err()
	}
	return nil
}
