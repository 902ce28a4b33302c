package shipping

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/narad/narad/application/fanout"
	"github.com/narad/narad/application/pause"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/domain/remote"
	"github.com/narad/narad/ports"
)

// Store reads what the shipper needs from the local replica.
type Store interface {
	ports.MetadataTopics
	ports.MetadataAccess
}

// Clients hands out a remote's ready client (remotes.Cache): nil with the
// credential state when this node cannot send to it.
type Clients interface {
	Client(r meta.Remote) (client ports.RemoteClient, state string)
}

// Deps are the shipper's ports; every one is required but Metrics.
type Deps struct {
	Store   Store
	Clients Clients
	Clock   ports.Clock
	Log     *slog.Logger
	Metrics Metrics
	// MaxHeldBytes is remotes.max_held_bytes: records held in memory
	// across failures on this node.
	MaxHeldBytes int64
	// Sleep waits d or until ctx ends (false then); nil is a real timer.
	// Tests advance a fake clock instead.
	Sleep func(ctx context.Context, d time.Duration) bool
}

// Shipper ships every remote child cursor of this node. Safe for
// concurrent use.
type Shipper struct {
	d    Deps
	held *budget

	mu      sync.Mutex
	remotes map[string]*remoteState // by remote id
	cursors map[fanout.RemoteCursor]*cursorState
}

var _ fanout.RemoteShipper = (*Shipper)(nil)

// New returns a Shipper over d.
func New(d Deps) *Shipper {
	if d.Metrics == nil {
		d.Metrics = NopMetrics{}
	}
	if d.Sleep == nil {
		d.Sleep = pause.For
	}
	return &Shipper{d: d, held: newBudget(d.MaxHeldBytes), remotes: map[string]*remoteState{}, cursors: map[fanout.RemoteCursor]*cursorState{}}
}

// remoteState is what one node keeps per remote: the gate, the request
// slots, what the capability probe learned.
type remoteState struct {
	mu          sync.Mutex
	gate        remote.Gate
	credVersion int64
	probed      bool
	capable1000 bool
	// zstdOff stops compression after the target refused a compressed
	// chunk, until the next check (internals.md §7.2 "Compression").
	zstdOff   bool
	slots     chan struct{}
	slotsSize int32
	name      string
	rtt       time.Duration // the last new connection's connect time
}

// stallKey is what ends a stall early when it changes: the remote's
// revision (a new password, URL, limits) and the target the link records
// (a resume that accepted a recreated target).
type stallKey struct {
	revision int64
	target   string
}

func (l link) stallKey() stallKey {
	return stallKey{revision: l.remote.Revision, target: l.stub.Remote.TargetID}
}

// cursorState is what the shipper keeps per cursor.
type cursorState struct {
	mu          sync.Mutex
	state       remote.State
	blockedAt   int64 // the offset the cursor is stuck on, -1 when none
	lastOKMs    int64 // last accepted request
	lastCheckMs int64 // last successful target check
	nextCheck   time.Time
	stallUntil  time.Time
	stallAt     stallKey // what the link was when the stall began
	lastWarn    time.Time
	lanes       []laneState
	// progress holds, per lane, the last offset of the current slab the
	// target accepted: a re-read sends only what follows.
	progress map[int]int64
}

type laneState struct {
	cap     remote.ByteCap
	backoff remote.LaneBackoff
}

func (s *Shipper) cursor(c fanout.RemoteCursor) *cursorState {
	s.mu.Lock()
	defer s.mu.Unlock()
	cs := s.cursors[c]
	if cs == nil {
		cs = &cursorState{state: remote.Unknown, blockedAt: -1, progress: map[int]int64{}}
		s.cursors[c] = cs
	}
	return cs
}

func (s *Shipper) remoteState(r meta.Remote) *remoteState {
	s.mu.Lock()
	defer s.mu.Unlock()
	rs := s.remotes[r.ID]
	if rs == nil {
		rs = &remoteState{credVersion: r.CredentialVersion, name: r.Name}
		s.remotes[r.ID] = rs
	}
	return rs
}

// Stopped forgets a cursor that ended.
func (s *Shipper) Stopped(c fanout.RemoteCursor) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.cursors, c)
}

// link is what one round of the send path reads of the replica.
type link struct {
	stub   meta.Topic
	remote meta.Remote
	client ports.RemoteClient
}

// errLinkChanged: the stub is gone or another attachment: the cursor's own
// validation stops it.
var errLinkChanged = errors.New("shipping: remote link changed")

// readLink reads c's stub and remote and the remote's client. A state
// other than Running says why the link cannot send now.
func (s *Shipper) readLink(c fanout.RemoteCursor) (link, remote.State, error) {
	stub, ok, err := s.d.Store.Topic(c.Child)
	if err != nil {
		return link{}, remote.Unknown, err
	}
	if !ok || !stub.IsRemoteStub() || stub.Parent != c.Parent || stub.AttachEpoch != c.Epoch {
		return link{}, remote.Unknown, errLinkChanged
	}
	l := link{stub: stub}
	if stub.Remote.Paused {
		return l, remote.Paused, nil
	}
	all, err := s.d.Store.Remotes()
	if err != nil {
		return l, remote.Unknown, err
	}
	for _, r := range all {
		if r.Name == stub.Remote.Name && r.ID == stub.Remote.RemoteID {
			l.remote = r
		}
	}
	if l.remote.ID == "" {
		return l, remote.RemoteMissing, nil
	}
	client, state := s.d.Clients.Client(l.remote)
	if client == nil {
		st, ok := remote.ParseState(state)
		if !ok {
			st = remote.CredentialUnreadable
		}
		return l, st, nil
	}
	l.client = client
	return l, remote.Running, nil
}

// setState records cs's state and logs an entry into a stall once.
func (s *Shipper) setState(c fanout.RemoteCursor, cs *cursorState, st remote.State, status int) {
	cs.mu.Lock()
	prev := cs.state
	cs.state = st
	now := s.d.Clock.Now()
	warnDue := now.Sub(cs.lastWarn) >= unavailableLogEvery
	if st != prev && (st == remote.Unavailable || st == remote.Throttled) && warnDue {
		cs.lastWarn = now
	}
	cs.mu.Unlock()
	if st == prev || st == remote.Paused || prev == remote.Paused && st == remote.Running {
		return
	}
	log := s.d.Log.With(slog.String("parent", c.Parent), slog.Int("partition", int(c.Partition)), slog.String("child", c.Child))
	switch {
	case st == remote.Running:
		log.Info("remote child running again")
	case st == remote.Unavailable || st == remote.Throttled:
		if warnDue {
			log.Warn("remote child stalled", slog.String("state", st.String()), slog.Int("status", status))
		}
	case st != remote.Unknown:
		log.Error("remote child stalled", slog.String("state", st.String()), slog.Int("status", status))
	}
}

// jitter draws a full-jitter factor in [0,1).
func jitter() float64 { return rand.Float64() }
