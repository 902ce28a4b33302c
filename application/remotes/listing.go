package remotes

import (
	"context"
	"sync"

	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/domain/remote"
	"github.com/narad/narad/ports"
)

// LinkReader reads the remote child cursors of a parent that node runs:
// this node's own, or another's over node RPC op 36.
type LinkReader interface {
	RemoteLinks(ctx context.Context, node, parent string) ([]ports.RemoteCursorReport, error)
}

// PartitionLink is one parent partition of a remote child as its owner
// reports it (api.md §2.11 partitions rows).
type PartitionLink struct {
	Partition   int32
	Node        string
	State       string
	BlockedAt   int64 // -1 when not stuck
	LastOKMs    int64
	LastCheckMs int64
	Lag         int64 // -1 unknown
	// OldestUnsentMs is the commit time of the oldest record the remote
	// lacks; 0 when none or unknown.
	OldestUnsentMs int64
	// The partition's positions, each -1 when unknown. StartOffset is the
	// link's start (its attach offset, from the stub; 0 on a partition
	// added after the attach); NextOffset the next parent offset the
	// cursor ships and HighWatermark the parent partition's, as the owner
	// reports them; AckFrontier the first offset the parent's consumers
	// have not acked (what `from: unconsumed` starts at), read from the
	// owners with source_drained.
	StartOffset   int64
	NextOffset    int64
	HighWatermark int64
	AckFrontier   int64
}

// LinkState is a remote child's link as the children listing shows it
// (api.md §2.11): the worst partition's state (unknown where an owner did
// not report), where it is stuck, its last success and verification.
type LinkState struct {
	State            string
	Blocked          *PartitionLink // the partition stuck on a record, nil when none
	LastSuccessMs    int64          // newest accepted request over the partitions; 0 before one
	TargetVerifiedMs int64          // oldest last successful check; 0 until every cursor had one
	Unverified       bool
	// LagSeconds is how old the oldest record the remote lacks is (the
	// link's recovery point); Headroom is the parent's retention minus it,
	// nil when the parent keeps forever.
	LagSeconds      int64
	HeadroomSeconds *int64
	// SourceDrained: the parent's consumers acked past the link's start on
	// every partition.
	SourceDrained bool
	Partitions    []PartitionLink
}

// LinkStates reads the link of every remote child of parent from the
// owners of its partitions, by child name.
func (s *Service) LinkStates(ctx context.Context, parent meta.Topic) (map[string]LinkState, error) {
	stubs, err := s.stubsOf(parent)
	if err != nil || len(stubs) == 0 {
		return nil, err
	}
	rows, err := s.d.Store.Assignments(parent.Name)
	if err != nil {
		return nil, readFailure(err)
	}
	owners := map[int32]string{}
	for _, r := range rows {
		if r.BelongsTo(parent.ID) && r.Owner != "" {
			owners[r.Partition] = r.Owner
		}
	}
	reports := s.askOwners(ctx, parent.Name, owners)
	unconsumed, _ := s.startOffsets(ctx, parent, meta.RemoteFromUnconsumed)
	now := s.d.Clock.Now().UnixMilli()
	out := make(map[string]LinkState, len(stubs))
	for _, stub := range stubs {
		ls := foldLink(stub, parent.Partitions, owners, reports, now)
		if ls.LagSeconds >= 0 && parent.RetentionMs > 0 {
			h := parent.RetentionMs/1000 - ls.LagSeconds
			ls.HeadroomSeconds = &h
		}
		ls.SourceDrained = drained(stub.AttachOffsets, unconsumed)
		for i := range ls.Partitions {
			pl := &ls.Partitions[i]
			pl.StartOffset, pl.AckFrontier = offsetAt(stub.AttachOffsets, pl.Partition), offsetAt(unconsumed, pl.Partition)
			if unconsumed == nil {
				pl.AckFrontier = -1
			}
		}
		out[stub.Name] = ls
	}
	return out, nil
}

// offsetAt is offsets' entry for partition p: 0 past its end (a partition
// the parent gained after the attach starts at 0, api.md §2.10.1).
func offsetAt(offsets []int64, p int32) int64 {
	if int(p) < len(offsets) {
		return offsets[p]
	}
	return 0
}

// drained reports whether the consumers' frontier (unconsumed, one per
// parent partition; nil when unknown) is at or past every start offset.
func drained(starts, unconsumed []int64) bool {
	if unconsumed == nil {
		return false
	}
	for p, u := range unconsumed {
		if p < len(starts) && u < starts[p] {
			return false
		}
	}
	return true
}

// stubsOf returns parent's remote children.
func (s *Service) stubsOf(parent meta.Topic) ([]meta.Topic, error) {
	var out []meta.Topic
	for _, name := range parent.Children {
		c, found, err := s.d.Store.Topic(name)
		if err != nil {
			return nil, readFailure(err)
		}
		if found && c.IsRemoteStub() && c.Parent == parent.Name {
			out = append(out, c)
		}
	}
	return out, nil
}

// cursorKey names one reported cursor.
type cursorKey struct {
	child     string
	partition int32
}

// askOwners asks every owner once, side by side; an owner that does not
// answer reports nothing.
func (s *Service) askOwners(ctx context.Context, parent string, owners map[int32]string) map[cursorKey]PartitionLink {
	nodes := map[string]bool{}
	for _, n := range owners {
		nodes[n] = true
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	out := map[cursorKey]PartitionLink{}
	for node := range nodes {
		if s.d.Links == nil {
			break
		}
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, ownerAnswerTimeout)
			defer cancel()
			got, err := s.d.Links.RemoteLinks(ctx, node, parent)
			if err != nil {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			for _, r := range got {
				if owners[r.Partition] == node {
					out[cursorKey{r.Child, r.Partition}] = PartitionLink{Partition: r.Partition, Node: node, State: r.State,
						BlockedAt: r.BlockedAt, LastOKMs: r.LastOKMs, LastCheckMs: r.LastCheckMs, Lag: r.Lag, OldestUnsentMs: r.OldestUnsentMs,
						NextOffset: r.NextOffset, HighWatermark: r.HighWatermark}
				}
			}
		})
	}
	wg.Wait()
	return out
}

// foldLink folds one stub's partitions into its link state.
func foldLink(stub meta.Topic, partitions int32, owners map[int32]string, reports map[cursorKey]PartitionLink, nowMs int64) LinkState {
	ls := LinkState{Partitions: make([]PartitionLink, 0, partitions)}
	var states []remote.State
	verifiedAll := true
	for p := range partitions {
		pl, ok := reports[cursorKey{stub.Name, p}]
		if !ok {
			pl = PartitionLink{Partition: p, Node: owners[p], State: remote.Unknown.String(), BlockedAt: -1, Lag: -1, NextOffset: -1, HighWatermark: -1}
		}
		if stub.Remote.Paused && pl.State == remote.Running.String() {
			pl.State = remote.Paused.String()
		}
		ls.Partitions = append(ls.Partitions, pl)
		st, valid := remote.ParseState(pl.State)
		if !valid {
			st = remote.Unknown
		}
		states = append(states, st)
		ls.LastSuccessMs = max(ls.LastSuccessMs, pl.LastOKMs)
		if pl.OldestUnsentMs > 0 {
			ls.LagSeconds = max(ls.LagSeconds, (nowMs-pl.OldestUnsentMs)/1000)
		}
		if pl.BlockedAt >= 0 && ls.Blocked == nil {
			blocked := pl
			ls.Blocked = &blocked
		}
		if pl.LastCheckMs == 0 {
			verifiedAll = false
		} else if ls.TargetVerifiedMs == 0 || pl.LastCheckMs < ls.TargetVerifiedMs {
			ls.TargetVerifiedMs = pl.LastCheckMs
		}
		if pl.State == remote.Running.String() && nowMs-pl.LastCheckMs > unverifiedAfter.Milliseconds() {
			ls.Unverified = true
		}
	}
	if !verifiedAll {
		ls.TargetVerifiedMs = 0
	}
	ls.State = remote.Worst(states...).String()
	if stub.Remote.Paused && ls.State == remote.Running.String() {
		ls.State = remote.Paused.String()
	}
	return ls
}

// LinksOf reads parent's remote children and their links; none when the
// parent has no remote child. The children listing's access rule has
// already passed.
func (s *Service) LinksOf(ctx context.Context, parent string) ([]meta.Topic, map[string]LinkState, error) {
	t, found, err := s.d.Store.Topic(parent)
	if err != nil || !found {
		return nil, nil, err
	}
	stubs, err := s.stubsOf(t)
	if err != nil || len(stubs) == 0 {
		return nil, nil, err
	}
	links, err := s.LinkStates(ctx, t)
	return stubs, links, err
}
