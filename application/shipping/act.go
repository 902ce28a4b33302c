package shipping

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/narad/narad/domain/remote"
	"github.com/narad/narad/ports"
)

// act does what the classifier's verdict on a request of n records says
// (internals.md §7.3).
func (ln *lane) act(ctx context.Context, rs *remoteState, l link, v remote.Verdict, n, status int) error {
	s, now := ln.s, ln.s.d.Clock.Now()
	switch v.Action {
	case remote.Committed:
		ln.committed(rs, n)
		return nil
	case remote.RetryLane:
		rs.mu.Lock()
		rs.gate.Failure(remote.Unavailable, now, 0, jitter())
		rs.mu.Unlock()
		ln.cs.mu.Lock()
		d := ln.cs.lanes[ln.i].backoff.Failure(jitter())
		ln.cs.mu.Unlock()
		s.setState(ln.c, ln.cs, remote.Unavailable, status)
		return ln.wait(ctx, d)
	case remote.GateClose:
		rs.mu.Lock()
		rs.gate.Failure(v.State, now, v.RetryAfter, jitter())
		rs.mu.Unlock()
		s.setState(ln.c, ln.cs, v.State, status)
		return nil // the next admit waits for the gate
	case remote.Stall:
		ln.endProbe(rs, v.State, now)
		s.stall(ln.c, ln.cs, v.State, l.stallKey(), status)
		return ln.waitStall(ctx, l.stallKey())
	case remote.ProbeListing:
		return ln.probeListing(ctx, rs, l, status)
	case remote.ResendUncompressed:
		rs.mu.Lock()
		rs.zstdOff = true
		rs.mu.Unlock()
		return nil
	}
	ln.endProbe(rs, v.State, now)
	return ln.refused(ctx, l, v, n, status)
}

// committed counts an accepted request: the lane moves on, its pacing and
// the remote's gate recover.
func (ln *lane) committed(rs *remoteState, n int) {
	rs.mu.Lock()
	rs.gate.Success()
	rs.mu.Unlock()
	ln.cs.mu.Lock()
	ln.cs.lanes[ln.i].cap.Accepted()
	ln.cs.lanes[ln.i].backoff.Success()
	ln.cs.lastOKMs = ln.s.d.Clock.Now().UnixMilli()
	ln.cs.mu.Unlock()
	if ln.limit > 0 {
		ln.limit = max(ln.limit-n, 0)
	}
	ln.accepted(n)
	ln.s.setState(ln.c, ln.cs, remote.Running, 0)
}

// endProbe reports an answer that is no remote-wide failure to the gate: a
// probe that got one ends (the gate stays as it was for others).
func (ln *lane) endProbe(rs *remoteState, st remote.State, now time.Time) {
	rs.mu.Lock()
	rs.gate.Failure(st, now, 0, jitter())
	rs.mu.Unlock()
}

// refused handles the answers that refuse records of the chunk: narrow
// down to the refused record, then block the lane on it until an admin
// skips it or a retry after StallRetryWait gets it through.
func (ln *lane) refused(ctx context.Context, l link, v remote.Verdict, n, status int) error {
	switch {
	case v.Action == remote.Halve:
		ln.cs.mu.Lock()
		ln.cs.lanes[ln.i].cap.Shrink()
		ln.cs.mu.Unlock()
		if n > 1 {
			ln.limit = max(n/2, 1)
			return nil
		}
	case v.Action == remote.ResendBeforeIndex && v.Index > 0:
		ln.limit = v.Index // the records before it go alone
		return nil
	case v.Action == remote.ResendBeforeIndex && !ln.force[0] && remote.PayloadRaw(ln.recs[0].Payload):
		ln.force[0], ln.limit = true, 1 // once more as base64
		return nil
	case v.Action == remote.Bisect && n > 1:
		ln.limit = max(n/2, 1)
		return nil
	case v.Action == remote.BlockRecheck:
		ln.cs.mu.Lock()
		ln.cs.nextCheck = time.Time{}
		ln.cs.mu.Unlock()
	}
	return ln.block(ctx, l, v.State, status)
}

// block holds the lane on its first record in state st: until an admin
// skips it (the lane drops it) or StallRetryWait passed (the record goes
// alone once more).
func (ln *lane) block(ctx context.Context, l link, st remote.State, status int) error {
	off := ln.recs[0].Offset
	ln.cs.mu.Lock()
	ln.cs.blockedAt = off
	ln.cs.mu.Unlock()
	ln.s.setState(ln.c, ln.cs, st, status)
	ln.s.d.Log.Error("remote child blocked on a record", "parent", ln.c.Parent, "partition", ln.c.Partition,
		"child", ln.c.Child, "offset", off, "state", st.String(), "status", status)
	until := ln.s.d.Clock.Now().Add(remote.StallRetryWait)
	ln.limit = 1
	for ln.s.d.Clock.Now().Before(until) {
		if err := ln.wait(ctx, pollInterval); err != nil {
			return err
		}
		now, _, err := ln.s.readLink(ln.c)
		if err != nil {
			return err
		}
		if skipped(now, ln.c.Partition, off) {
			return nil // the next step drops it
		}
	}
	return nil
}

func skipped(l link, partition int32, off int64) bool {
	for _, p := range l.stub.Remote.Skip {
		if p.Partition == partition && slices.Contains(p.Offsets, off) {
			return true
		}
	}
	return false
}

// waitStall waits out a stall: StallRetryWait, or less when the link
// changed.
func (ln *lane) waitStall(ctx context.Context, at stallKey) error {
	until := ln.s.d.Clock.Now().Add(remote.StallRetryWait)
	for ln.s.d.Clock.Now().Before(until) {
		if err := ln.wait(ctx, pollInterval); err != nil {
			return err
		}
		l, st, err := ln.s.readLink(ln.c)
		if err != nil {
			return err
		}
		if st == remote.Running && l.stallKey() != at {
			return nil
		}
	}
	return nil
}

// probeListing reads the target's children listing after a bare 404 from
// the batch route: an answer means the target lacks batch produce (a
// stall); none means something in front of it answered.
func (ln *lane) probeListing(ctx context.Context, rs *remoteState, l link, status int) error {
	path := "/v1/topics/" + url.PathEscape(l.stub.Remote.Topic) + "/children"
	a, err := l.client.Do(ctx, ports.RemoteRequest{Method: http.MethodGet, Path: path})
	if err == nil && a.Status == http.StatusOK {
		ln.endProbe(rs, remote.NoBatchProduce, ln.s.d.Clock.Now())
		ln.s.stall(ln.c, ln.cs, remote.NoBatchProduce, l.stallKey(), status)
		return ln.waitStall(ctx, l.stallKey())
	}
	return ln.act(ctx, rs, l, remote.Verdict{State: remote.Unavailable, Action: remote.RetryLane, Index: -1}, 0, status)
}
