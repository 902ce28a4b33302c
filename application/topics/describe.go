package topics

import (
	"context"
	"fmt"
	"github.com/narad/narad/domain/access"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// Description is a describe's answer (api.md §2.7).
type Description struct {
	Topic         meta.Topic
	SchemaVersion int32
	Schema        []byte // nil without a schema
	Stats         []PartitionStats
	Partial       bool // some entries are placeholders
}

// PartitionStats is one partition's entry. A placeholder (Status
// StatusOwnerUnavailable) carries zero numbers that clients must skip.
// OldestSegmentAt is the last write of the oldest segment in Unix seconds,
// 0 when unknown (a placeholder, a partition holding nothing).
type PartitionStats struct {
	Index           int32
	Segments        int
	OldestOffset    int64
	NextOffset      int64
	HighWatermark   int64
	SizeBytes       int64
	OldestSegmentAt int64
	OwnerNode       string
	Status          string
	OwnerLiveness   string
}

// DescribeRequest names the topic and optionally one partition.
type DescribeRequest struct {
	// Caller is who asks: any grant on the name, ownership, or admin.
	Caller       access.Principal
	Name         string
	Partition    int32
	HasPartition bool
}

// Describe returns the topic, its current schema and per-partition
// statistics (api.md §2.7). Partitions this node owns report their log
// statistics (a peek: it keeps no log open); partitions of other live
// owners are asked of those owners (describe_remote.go). A partition whose
// owner cannot report is a placeholder saying why, and the answer is then
// Partial rather than an error. ctx bounds the owners' calls.
func (s *Service) Describe(ctx context.Context, req DescribeRequest) (Description, error) {
	t, err := s.readTopic(req.Name)
	if err == nil {
		err = mayRead(req.Caller, t)
	}
	if err != nil {
		return Description{}, err
	}
	d := Description{Topic: t}
	if d.SchemaVersion, d.Schema, err = s.currentSchema(t.Name); err != nil {
		return Description{}, err
	}
	from, to := int32(0), t.Partitions
	if req.HasPartition {
		if req.Partition < 0 || req.Partition >= t.Partitions {
			return Description{}, domain.Refuse(domain.ErrInvalidArgument, "invalid partition")
		}
		from, to = req.Partition, req.Partition+1
	}
	if d.Stats, err = s.partitionStats(ctx, t, from, to); err != nil {
		return Description{}, err
	}
	for _, st := range d.Stats {
		d.Partial = d.Partial || st.Status != StatusOK
	}
	return d, nil
}

// currentSchema returns the newest schema version, 0 and nil without one.
func (s *Service) currentSchema(topic string) (int32, []byte, error) {
	history, err := s.store.Schemas(topic)
	if err != nil {
		return 0, nil, readFailure(err)
	}
	if len(history) == 0 {
		return 0, nil, nil
	}
	last := history[len(history)-1]
	return last.Version, last.Schema, nil
}

// partitionStats builds the entries of partitions [from, to): local ones
// from this node's logs, then other live owners' from those owners.
func (s *Service) partitionStats(ctx context.Context, t meta.Topic, from, to int32) ([]PartitionStats, error) {
	owners, members, err := s.owners(t)
	if err != nil {
		return nil, err
	}
	out := make([]PartitionStats, 0, to-from)
	var remote ownerAsks
	for p := from; p < to; p++ {
		st := s.oneStats(t, p, owners[p], members)
		if s.askable(st) {
			remote.add(st.OwnerNode, len(out))
		}
		out = append(out, st)
	}
	s.fetchRemote(ctx, t, remote, out)
	return out, nil
}

// owners reads the owner of each of t's partitions (rows of another
// incarnation left out; an unassigned partition is absent) and the member
// table.
func (s *Service) owners(t meta.Topic) (map[int32]string, []meta.Member, error) {
	rows, err := s.store.Assignments(t.Name)
	if err != nil {
		return nil, nil, readFailure(err)
	}
	owners := make(map[int32]string, len(rows))
	for _, r := range rows {
		if r.BelongsTo(t.ID) {
			owners[r.Partition] = r.Owner
		}
	}
	members, err := s.store.Members()
	if err != nil {
		return nil, nil, readFailure(err)
	}
	return owners, members, nil
}

// oneStats reports partition p: real numbers when this node owns it, a
// placeholder naming why otherwise (for another live owner, "unreachable"
// until that owner answers).
func (s *Service) oneStats(t meta.Topic, p int32, owner string, members []meta.Member) PartitionStats {
	if owner == "" {
		return placeholder(p, "", LivenessUnassigned)
	}
	if owner != s.self {
		return placeholder(p, owner, remoteLiveness(owner, members))
	}
	ls, err := s.logs.LogStats(domain.PartitionRef{Topic: t.Name, TopicID: domain.TopicID(t.ID), Partition: p})
	if err != nil {
		// The local log cannot answer now (closing, stale): a placeholder,
		// never zeros dressed as "ok".
		return placeholder(p, owner, LivenessUnreachable)
	}
	return reported(p, owner, ls)
}

// reported is partition p's entry from its owner's log statistics.
func reported(p int32, owner string, ls ports.LogStats) PartitionStats {
	st := PartitionStats{
		Index: p, Segments: ls.Segments, OldestOffset: ls.OldestOffset, NextOffset: ls.NextOffset,
		HighWatermark: ls.HighWatermark, SizeBytes: ls.SizeBytes, OwnerNode: owner, Status: StatusOK,
	}
	if !ls.OldestSegmentAt.IsZero() {
		st.OldestSegmentAt = ls.OldestSegmentAt.Unix()
	}
	return st
}

func placeholder(p int32, owner, liveness string) PartitionStats {
	return PartitionStats{Index: p, OwnerNode: owner, Status: StatusOwnerUnavailable, OwnerLiveness: liveness}
}

// remoteLiveness says why another node's partition is a placeholder before
// (or without) asking its owner: a dead owner is "dead", an owner with no
// member record or no address "unknown", an alive one "unreachable" until
// it answers.
func remoteLiveness(owner string, members []meta.Member) string {
	for _, m := range members {
		if m.ID != owner {
			continue
		}
		switch {
		case m.Status == meta.StatusDead:
			return LivenessDead
		case m.Addr == "":
			return LivenessUnknown
		}
		return LivenessUnreachable
	}
	return LivenessUnknown
}

// String helps test failures read.
func (p PartitionStats) String() string {
	return fmt.Sprintf("p%d owner=%s status=%s liveness=%s [%d,%d)", p.Index, p.OwnerNode, p.Status, p.OwnerLiveness, p.OldestOffset, p.HighWatermark)
}
