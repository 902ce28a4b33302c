package metastore

import (
	"sync"
	"time"

	"github.com/lni/dragonboat/v4/raftio"
)

// tenures records, per shard, since when the leader dragonboat last
// reported has led (its LeaderUpdated events), so the leader can tell how
// long it has led (internals.md §9.3: promotion waits until the leader has
// led for 12 s).
type tenures struct {
	mu  sync.Mutex
	now func() time.Time
	by  map[uint64]tenure
}

type tenure struct {
	leader, term uint64
	since        time.Time
}

var _ raftio.IRaftEventListener = (*tenures)(nil)

func newTenures() *tenures { return &tenures{now: time.Now, by: map[uint64]tenure{}} }

// LeaderUpdated keeps the first time a (leader, term) pair was reported.
func (t *tenures) LeaderUpdated(info raftio.LeaderInfo) {
	t.mu.Lock()
	defer t.mu.Unlock()
	cur := t.by[info.ShardID]
	if cur.leader == info.LeaderID && cur.term == info.Term {
		return
	}
	t.by[info.ShardID] = tenure{leader: info.LeaderID, term: info.Term, since: t.now()}
}

// since returns when replica became the leader of shard, if the newest
// report names it.
func (t *tenures) since(shard, replica uint64) (time.Time, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	cur, ok := t.by[shard]
	if !ok || cur.leader != replica || replica == 0 {
		return time.Time{}, false
	}
	return cur.since, true
}
