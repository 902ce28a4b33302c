package metastore

import (
	"sync"
	"time"

	"github.com/lni/dragonboat/v4/raftio"
)

// raftLinks records, per peer Raft address, when the transport last failed
// to connect and last connected (dragonboat's connection events), so the
// leader can tell a joiner it cannot reach from one it can (internals.md
// §9.3: promotion waits while heartbeats to the joiner fail).
type raftLinks struct {
	mu  sync.Mutex
	now func() time.Time
	by  map[string]raftLink
}

type raftLink struct{ failed, connected time.Time }

var _ raftio.ISystemEventListener = (*raftLinks)(nil)

func newRaftLinks() *raftLinks { return &raftLinks{now: time.Now, by: map[string]raftLink{}} }

func (l *raftLinks) note(addr string, failed bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	cur := l.by[addr]
	if failed {
		cur.failed = l.now()
	} else {
		cur.connected = l.now()
	}
	l.by[addr] = cur
}

// get returns addr's last failure and last connection (zero when none).
func (l *raftLinks) get(addr string) (failed, connected time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	cur := l.by[addr]
	return cur.failed, cur.connected
}

// ConnectionEstablished and ConnectionFailed are the events kept; snapshot
// connections count like any other.
func (l *raftLinks) ConnectionEstablished(info raftio.ConnectionInfo) { l.note(info.Address, false) }
func (l *raftLinks) ConnectionFailed(info raftio.ConnectionInfo)      { l.note(info.Address, true) }

func (l *raftLinks) NodeHostShuttingDown()                     {}
func (l *raftLinks) NodeUnloaded(raftio.NodeInfo)              {}
func (l *raftLinks) NodeDeleted(raftio.NodeInfo)               {}
func (l *raftLinks) NodeReady(raftio.NodeInfo)                 {}
func (l *raftLinks) MembershipChanged(raftio.NodeInfo)         {}
func (l *raftLinks) SendSnapshotStarted(raftio.SnapshotInfo)   {}
func (l *raftLinks) SendSnapshotCompleted(raftio.SnapshotInfo) {}
func (l *raftLinks) SendSnapshotAborted(raftio.SnapshotInfo)   {}
func (l *raftLinks) SnapshotReceived(raftio.SnapshotInfo)      {}
func (l *raftLinks) SnapshotRecovered(raftio.SnapshotInfo)     {}
func (l *raftLinks) SnapshotCreated(raftio.SnapshotInfo)       {}
func (l *raftLinks) SnapshotCompacted(raftio.SnapshotInfo)     {}
func (l *raftLinks) LogCompacted(raftio.EntryInfo)             {}
func (l *raftLinks) LogDBCompacted(raftio.EntryInfo)           {}
