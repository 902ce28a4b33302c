package membership

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// Sentinel errors.
var (
	// ErrNotLeader: only the leader admits; the caller answers 421 naming
	// the leader it knows.
	ErrNotLeader = errors.New("membership: not the metadata leader")
	// ErrRemoved: the replica id was removed for good (Raft never takes a
	// removed id back); the joiner answers 409.
	ErrRemoved = errors.New("membership: replica removed from the cluster")
	// ErrBadRequest: a join without a node id or Raft address.
	ErrBadRequest = errors.New("membership: bad join request")
	// ErrOlderRelease: a joiner not yet in the configuration applies fewer
	// entry types than every recorded member, or than the leader's database
	// has applied (internals §8.3 "Joining"). The API answers 409 with code
	// older_release; the joiner logs once and keeps trying.
	ErrOlderRelease = errors.New("membership: joiner runs an older release than the cluster")
)

// Status is how a node entered (or stays in) the shard, as the join answer
// names it.
type Status string

// Join answers.
const (
	// StatusVoter: the node is a voter already.
	StatusVoter Status = "voter"
	// StatusPromoted: a staged non-voter became a voter.
	StatusPromoted Status = "promoted"
	// StatusStaged: the node was added as a non-voter.
	StatusStaged Status = "staged"
	// StatusDeferred: the node stays a non-voter for now; Decision.Reason
	// says why.
	StatusDeferred Status = "deferred"
)

// Decision is the answer to one join.
type Decision struct {
	Status Status
	// Reason says why a staged node was not promoted (StatusDeferred).
	Reason string
}

// Join is one node's request to enter the metadata shard.
type Join struct {
	NodeID   string
	RaftAddr string
	// EntryTypes is the newest entry type the joiner applies; 0 (a joiner
	// that sent no report) means the legacy set.
	EntryTypes meta.EntryType
	// DataDirEmpty: the joiner starts from an empty data directory; under a
	// tombstoned id that is a deliberate re-add (internals §9.5).
	DataDirEmpty bool
}

// Store is what admission needs: the Raft configuration, leadership, the
// member records and the newest entry type the leader's database applied.
type Store interface {
	ports.MetadataMembership
	// Propose writes the readmission of a tombstoned id (§9.5).
	ports.MetadataProposer
	// Tombstones returns the decommissioned ids.
	Tombstones() ([]meta.Tombstone, error)
	IsLeader() bool
	// LeaderSince reports since when this replica has led (false while
	// it does not lead).
	LeaderSince() (time.Time, bool)
	// RaftLink reports when the Raft transport last failed to connect to
	// the peer at raftAddr and when it last connected.
	RaftLink(raftAddr string) (failed, connected time.Time)
	Members() ([]meta.Member, error)
	NewestTypeApplied() meta.EntryType
	// ReplicaID is this replica's id in the shard.
	ReplicaID() uint64
	// TransferLeadership hands the leadership to the voter replicaID and
	// returns once this replica no longer leads, or an error when that did
	// not happen before ctx ended (handover.go).
	TransferLeadership(ctx context.Context, replicaID uint64) error
}

// Admitter decides admissions. Safe for concurrent use; callers serialize
// joins (one configuration change at a time is Raft's rule anyway).
type Admitter struct {
	store     Store
	maxVoters int
	now       func() time.Time
	log       *slog.Logger
}

// AdmitterOption configures an Admitter.
type AdmitterOption func(*Admitter)

// WithClock gives the Admitter the node's clock (the leader tenure rule).
func WithClock(c ports.Clock) AdmitterOption { return func(a *Admitter) { a.now = c.Now } }

// WithLogger gives the Admitter a logger (the leadership hand-over logs at
// warn); none discards.
func WithLogger(l *slog.Logger) AdmitterOption { return func(a *Admitter) { a.log = l } }

// NewAdmitter returns an Admitter promoting staged nodes while the shard
// has fewer than maxVoters voters (3 or 5). It panics on a nil store or
// another voter count.
func NewAdmitter(store Store, maxVoters int, opts ...AdmitterOption) *Admitter {
	if store == nil {
		panic("membership: nil store")
	}
	if maxVoters != DefaultMaxVoters && maxVoters != LargeMaxVoters {
		panic(fmt.Sprintf("membership: max voters %d is neither 3 nor 5", maxVoters))
	}
	a := &Admitter{store: store, maxVoters: maxVoters, now: time.Now, log: slog.New(slog.DiscardHandler)}
	for _, o := range opts {
		o(a)
	}
	return a
}

// Admit enters j into the shard (internals §9.3). A node new to the
// configuration is staged as a non-voter: it replicates and serves but does
// not vote, and the joiner starts its replica as a non-voter before it
// knows any answer (dragonboat cannot stage a replica started as a voter,
// and promotes a staged one in place). A staged node asking again is
// promoted while voters < maxVoters and its member record exists, is alive
// and is not draining; otherwise it is deferred with the reason. A node
// already in the configuration is answered as it stands, so a lost answer
// is safe to retry, and is never refused for its release (its heartbeat
// holds new entry types back instead); a voter that ran before and comes
// back with an empty data directory first has the leadership handed to
// another voter (handover.go). A new node on an older release is
// refused with ErrOlderRelease. A tombstoned id is refused with ErrRemoved
// unless the join declares an empty data directory (readmit.go).
func (a *Admitter) Admit(ctx context.Context, j Join) (Decision, error) {
	if j.NodeID == "" || j.RaftAddr == "" {
		return Decision{}, fmt.Errorf("join %q at %q: %w", j.NodeID, j.RaftAddr, ErrBadRequest)
	}
	if !a.store.IsLeader() {
		return Decision{}, ErrNotLeader
	}
	m, err := a.store.Membership(ctx)
	if err != nil {
		return Decision{}, fmt.Errorf("membership: read configuration: %w", err)
	}
	id := meta.ReplicaID(j.NodeID)
	if err := a.readmit(ctx, j, id, m); err != nil {
		return Decision{}, err
	}
	if _, voter := m.Voters[id]; voter {
		if err := a.handOver(ctx, j, id, m); err != nil {
			return Decision{}, fmt.Errorf("membership: rejoin of %q: %w", j.NodeID, err)
		}
		return Decision{Status: StatusVoter}, nil
	}
	if _, staged := m.NonVoters[id]; staged {
		return a.promote(ctx, j, id, len(m.Voters))
	}
	if err := a.checkRelease(j); err != nil {
		return Decision{}, err
	}
	if err := a.store.AddNonVoter(ctx, id, j.RaftAddr); err != nil {
		return Decision{}, fmt.Errorf("membership: stage %q: %w", j.NodeID, err)
	}
	return Decision{Status: StatusStaged}, nil
}

// checkRelease refuses a new joiner that applies fewer entry types than the
// leader's database has applied, or than every recorded member (itself
// excluded) reports.
func (a *Admitter) checkRelease(j Join) error {
	joiner := meta.ReportedNewest(j.EntryTypes)
	if applied := a.store.NewestTypeApplied(); joiner < applied {
		return fmt.Errorf("join %q applies through type %d; the cluster's database applied type %d (%s): %w",
			j.NodeID, joiner, applied, applied, ErrOlderRelease)
	}
	members, err := a.store.Members()
	if err != nil {
		return fmt.Errorf("membership: read members: %w", err)
	}
	lowest, others := meta.EntryType(0), 0
	for _, m := range members {
		if m.ID == j.NodeID {
			continue
		}
		if r := meta.ReportedNewest(m.EntryTypes); others == 0 || r < lowest {
			lowest = r
		}
		others++
	}
	if others > 0 && joiner < lowest {
		return fmt.Errorf("join %q applies through type %d; every member applies through %d or newer: %w",
			j.NodeID, joiner, lowest, ErrOlderRelease)
	}
	return nil
}

// ledLongEnough reports whether this replica has led for the promotion
// tenure (internals §9.3).
func (a *Admitter) ledLongEnough() bool {
	since, ok := a.store.LeaderSince()
	return ok && a.now().Sub(since) >= promotionLeaderTenureMin
}

// linkFailing reports whether a connection failure to raftAddr counts: it
// happened within the window and no connection succeeded after it.
func (a *Admitter) linkFailing(raftAddr string) bool {
	failed, connected := a.store.RaftLink(raftAddr)
	return !failed.IsZero() && a.now().Sub(failed) < promotionLinkFailureWindow && !connected.After(failed)
}

// promote makes the staged node j a voter, or says why not yet.
func (a *Admitter) promote(ctx context.Context, j Join, id uint64, voters int) (Decision, error) {
	if voters >= a.maxVoters {
		return deferred("the shard has its %d voters", a.maxVoters), nil
	}
	if !a.ledLongEnough() {
		return deferred("the leader has led for less than %s", promotionLeaderTenureMin), nil
	}
	if a.linkFailing(j.RaftAddr) {
		return deferred("the leader's Raft connection to %s failed within %s", j.RaftAddr, promotionLinkFailureWindow), nil
	}
	if why, err := a.memberBlocks(j.NodeID); err != nil || why != "" {
		return Decision{Status: StatusDeferred, Reason: why}, err
	}
	if err := a.store.AddVoter(ctx, id, j.RaftAddr); err != nil {
		return Decision{}, fmt.Errorf("membership: promote %q: %w", j.NodeID, err)
	}
	return Decision{Status: StatusPromoted}, nil
}

// memberBlocks says why the member record of id does not allow a
// promotion: missing (the joiner registers once caught up), dead or
// draining. Empty when it allows one.
func (a *Admitter) memberBlocks(id string) (string, error) {
	members, err := a.store.Members()
	if err != nil {
		return "", fmt.Errorf("membership: read members: %w", err)
	}
	for _, m := range members {
		switch {
		case m.ID != id:
		case m.Status != meta.StatusAlive:
			return "its member record is " + m.Status, nil
		case m.Draining:
			return "it is draining", nil
		default:
			return "", nil
		}
	}
	return "no member record yet", nil
}

func deferred(format string, args ...any) Decision {
	return Decision{Status: StatusDeferred, Reason: fmt.Sprintf(format, args...)}
}
