package shipping

import (
	"sort"
	"time"

	"github.com/narad/narad/application/fanout"
	"github.com/narad/narad/domain/remote"
	"github.com/narad/narad/ports"
)

// CursorStatus is one remote child cursor as this node sees it: its link
// state, the record it is stuck on and its last successes.
type CursorStatus struct {
	Cursor      fanout.RemoteCursor
	State       string
	BlockedAt   int64 // -1 when not stuck
	LastOKMs    int64 // last accepted request, Unix ms; 0 before one
	LastCheckMs int64 // last successful target check, Unix ms; 0 before one
}

// Statuses returns every cursor the shipper serves, by parent, child and
// partition.
func (s *Shipper) Statuses() []CursorStatus {
	s.mu.Lock()
	out := make([]CursorStatus, 0, len(s.cursors))
	for c, cs := range s.cursors {
		cs.mu.Lock()
		out = append(out, CursorStatus{Cursor: c, State: cs.state.String(), BlockedAt: cs.blockedAt,
			LastOKMs: cs.lastOKMs, LastCheckMs: cs.lastCheckMs})
		cs.mu.Unlock()
	}
	s.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].Cursor, out[j].Cursor
		if a.Parent != b.Parent {
			return a.Parent < b.Parent
		}
		if a.Child != b.Child {
			return a.Child < b.Child
		}
		return a.Partition < b.Partition
	})
	return out
}

// BlockedAt says where this node's cursor of parent's partition for child
// is stuck: the offset and state, or -1 when it is not blocked on a record
// (or runs elsewhere).
func (s *Shipper) BlockedAt(parent string, partition int32, child string) (offset int64, state string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c, cs := range s.cursors {
		if c.Parent == parent && c.Partition == partition && c.Child == child {
			cs.mu.Lock()
			defer cs.mu.Unlock()
			return cs.blockedAt, cs.state.String()
		}
	}
	return -1, ""
}

// RemoteLinks reports the remote child cursors of parent this node runs,
// with their lag unknown (-1): the fan-out engine knows where they stand.
func (s *Shipper) RemoteLinks(parent string) []ports.RemoteCursorReport {
	var out []ports.RemoteCursorReport
	for _, st := range s.Statuses() {
		if st.Cursor.Parent == parent {
			out = append(out, ports.RemoteCursorReport{Partition: st.Cursor.Partition, Child: st.Cursor.Child, State: st.State,
				BlockedAt: st.BlockedAt, LastOKMs: st.LastOKMs, LastCheckMs: st.LastCheckMs, Lag: -1})
		}
	}
	return out
}

// RemoteStatus is one remote as this node's send path sees it.
type RemoteStatus struct {
	Remote         string
	RTT            time.Duration // the last new connection's connect time; 0 before one
	GateBackoff    time.Duration // 0 while the gate is open
	ChunkBytesCap  int           // the smallest lane byte cap of the remote's cursors
	hasChunkLimits bool
}

// Remotes reports every remote this node has sent to.
func (s *Shipper) Remotes() []RemoteStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	byName := map[string]*RemoteStatus{}
	for _, rs := range s.remotes {
		rs.mu.Lock()
		byName[rs.name] = &RemoteStatus{Remote: rs.name, RTT: rs.rtt, GateBackoff: rs.gate.Backoff()}
		rs.mu.Unlock()
	}
	for c, cs := range s.cursors {
		st := byName[s.remoteOf(c)]
		if st == nil {
			continue
		}
		cs.mu.Lock()
		for _, l := range cs.lanes {
			if b := l.cap.Bytes(); !st.hasChunkLimits || b < st.ChunkBytesCap {
				st.ChunkBytesCap, st.hasChunkLimits = b, true
			}
		}
		cs.mu.Unlock()
	}
	out := make([]RemoteStatus, 0, len(byName))
	for _, st := range byName {
		if !st.hasChunkLimits {
			st.ChunkBytesCap = remote.ChunkStartBytes
		}
		out = append(out, *st)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Remote < out[j].Remote })
	return out
}

// remoteOf names the remote c's link ships to ("" when unknown).
func (s *Shipper) remoteOf(c fanout.RemoteCursor) string {
	stub, found, err := s.d.Store.Topic(c.Child)
	if err != nil || !found || stub.Remote == nil {
		return ""
	}
	return stub.Remote.Name
}
