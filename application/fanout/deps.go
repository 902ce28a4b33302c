package fanout

import (
	"context"
	"github.com/narad/narad/domain"
	"log/slog"
	"time"

	"github.com/narad/narad/application/leaderconfirm"
	"github.com/narad/narad/ports"
)

// Store is what the engine reads from the metadata replica.
type Store interface {
	ports.MetadataTopics
	ports.MetadataCluster
	ports.MetadataFreshness
}

// Committer commits a batch as the partition's owner on this node
// (produce.Committer: the ownership and incarnation re-checks, then the
// durable commit).
type Committer interface {
	CommitBatch(ctx context.Context, req ports.CommitRequest) (first int64, err error)
}

// Confirmer asks the Raft leader before the engine destroys anything
// (leaderconfirm.Confirmer).
type Confirmer interface {
	// LinkLive authorizes anchoring a cursor of parent → child at epoch.
	LinkLive(ctx context.Context, parent, child, epoch string) leaderconfirm.Decision
	// LinkGone authorizes removing a cursor file of parent → child at epoch.
	LinkGone(ctx context.Context, parent, child, epoch string) leaderconfirm.Decision
}

// Latch is the ownership latch (leaderconfirm.Latch): no cursor runs
// before the replica caught up once.
type Latch interface {
	Ready(ctx context.Context) bool
}

// Metrics records what the engine copied and lost (api.md §7, the
// narad_fanout_* counters and histograms). Calls are cheap, never block and
// never fail. Lag gauges are read from Engine.Cursors at scrape time.
type Metrics interface {
	// Copied counts records committed into child after a cursor advanced
	// (narad_fanout_committed_total).
	Copied(parent, child string, records int)
	// Dropped counts parent records child will never receive: aged out
	// before the cursor read them, or unreadable
	// (narad_fanout_child_dropped_messages).
	Dropped(parent, child string, records int64)
	// Batch observes one delivered slab's records and key+payload bytes
	// (narad_fanout_batch_records, narad_fanout_batch_bytes).
	Batch(records, bytes int)
}

// NopMetrics records nothing.
type NopMetrics struct{}

func (NopMetrics) Copied(string, string, int)    {}
func (NopMetrics) Dropped(string, string, int64) {}
func (NopMetrics) Batch(int, int)                {}

// Deps are the engine's ports; every one is required. Self is this node's
// member id.
type Deps struct {
	Store     Store
	Logs      ports.PartitionReader
	Cursors   ports.FanoutCursors
	Local     Committer
	Peers     ports.PeerCommitter
	Latch     Latch
	Confirmer Confirmer
	Clock     ports.Clock
	Metrics   Metrics
	Log       *slog.Logger
	Self      string
	// Markers reads the move.marker of a partition that moved here (a
	// link without attach offsets whose cursor file did not come along
	// starts at the oldest retained offset, not the tail); nil reads none.
	Markers ports.MoveMarkers
	// Remote ships remote children's records (application/shipping); nil
	// runs no cursor for a remote child.
	Remote RemoteShipper
}

// RemoteCursor names one remote child's cursor: parent partition, stub,
// attachment.
type RemoteCursor struct {
	Parent    string
	ParentID  string
	Partition int32
	Child     string
	Epoch     string
}

// RemoteShipper is the sender at the end of a remote child's cursor
// (internals.md §7.2): the cursor reads and advances as for a local child,
// the shipper decides when it may read and sends what it read.
type RemoteShipper interface {
	// Ready returns once the link may send (not paused, its remote's gate
	// open, no stall to wait out), so a stopped link costs no reads; it
	// returns ctx.Err() when ctx ends.
	Ready(ctx context.Context, c RemoteCursor) error
	// Ship sends recs, one slab in parent order, and returns nil once the
	// target accepted, or an admin skipped, every record; any other return
	// stops the cursor without advancing (ctx ended, the link changed).
	Ship(ctx context.Context, c RemoteCursor, recs []domain.Record) error
	// Stopped drops what the shipper keeps for a cursor that ended.
	Stopped(c RemoteCursor)
}

// Options tune the engine; zero values take the spec's constants. Tests
// shorten the intervals.
type Options struct {
	BatchMaxRecords int           // records per slab (4,096)
	BatchMaxBytes   int           // key+payload bytes per slab (4 MiB)
	Linger          time.Duration // top-up window of a slab (25 ms; negative: none)

	ReconcileInterval time.Duration // reconciler tick (1 s)
	LongPoll          time.Duration // a slab's wait for new records (1 s)
	RetryBackoff      time.Duration // after a failed commit or cursor write (1 s)
	DelaySleepMax     time.Duration // cap of a delay child's sleep (30 s)
}

func (o Options) withDefaults() Options {
	set := func(v *time.Duration, def time.Duration) {
		if *v <= 0 {
			*v = def
		}
	}
	if o.BatchMaxRecords <= 0 {
		o.BatchMaxRecords = batchMaxRecordsDefault
	}
	if o.BatchMaxBytes <= 0 {
		o.BatchMaxBytes = batchMaxBytesDefault
	}
	if o.Linger < 0 {
		o.Linger = 0
	} else if o.Linger == 0 {
		o.Linger = lingerDefault
	}
	set(&o.ReconcileInterval, reconcileInterval)
	set(&o.LongPoll, slabLongPollInterval)
	set(&o.RetryBackoff, retryBackoffInterval)
	set(&o.DelaySleepMax, delaySleepMaxInterval)
	return o
}
