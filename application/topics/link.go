package topics

import (
	"context"
	"fmt"
	"strings"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
)

// linkReq is one attach as the rules see it (api.md §2.5 create-as-child,
// §2.10 attach): the parent and child views as this replica holds them
// (a create-as-child's child is not proposed yet: childSchema is its first
// schema, nil for none).
type linkReq struct {
	parent      meta.Topic
	child       meta.Topic
	childSchema []byte
	delayMs     int64
}

// checkLinkable applies the fan-out rules of internals.md §6.6 in the
// spec's order, with the messages clients see. The apply rules in
// domain/meta check them again; this pass gives the 409s their words.
func (s *Service) checkLinkable(r linkReq) error {
	p, c := r.parent, r.child
	switch {
	case p.IsRemoteStub():
		return roleConflict("%q is a remote child's stub", p.Name)
	case p.Parent != "":
		return roleConflict("%q is a child of %q and cannot have children", p.Name, p.Parent)
	case len(c.Children) > 0:
		return roleConflict("%q is a parent and cannot become a child", c.Name)
	case c.Parent == p.Name:
		return domain.Refuse(domain.ErrConflict, fmt.Sprintf("already exists: %q is already attached to %q", c.Name, p.Name))
	case c.Parent != "":
		return roleConflict("%q is already attached to %q", c.Name, c.Parent)
	case len(p.Children) >= meta.ChildrenMaxCount:
		return domain.Refuse(domain.ErrConflict, fmt.Sprintf("parent has reached the maximum number of children: %q has %d", p.Name, len(p.Children)))
	case r.delayMs > 0 && p.RetentionMs != 0 && p.RetentionMs < r.delayMs+RetentionFloorMs:
		return domain.Refuse(domain.ErrConflict, fmt.Sprintf(
			"delay exceeds what the parent's retention can buffer: delay %d ms needs retention_ms of %q to be 0 or at least %d, it is %d",
			r.delayMs, p.Name, r.delayMs+RetentionFloorMs, p.RetentionMs))
	}
	return s.checkSchemaGate(r)
}

// checkSchemaGate: a child with a schema needs a parent whose history is
// the same, version for version, as JSON values.
func (s *Service) checkSchemaGate(r linkReq) error {
	parentHist, err := s.store.Schemas(r.parent.Name)
	if err != nil {
		return readFailure(err)
	}
	childHist, err := s.childHistory(r)
	if err != nil {
		return err
	}
	switch {
	case len(childHist) == 0:
		return nil
	case len(parentHist) == 0:
		return schemaGate("%q has a schema and parent %q has none", r.child.Name, r.parent.Name)
	case len(parentHist) != len(childHist):
		return schemaGate("%q has %d schema versions, parent %q has %d", r.child.Name, len(childHist), r.parent.Name, len(parentHist))
	}
	for i := range parentHist {
		if !sameDocument(parentHist[i].Schema, childHist[i]) {
			return schemaGate("version %d of %q differs from parent %q", i+1, r.child.Name, r.parent.Name)
		}
	}
	return nil
}

func (s *Service) childHistory(r linkReq) ([][]byte, error) {
	if r.childSchema != nil {
		return [][]byte{r.childSchema}, nil
	}
	if r.child.Name == "" {
		return nil, nil
	}
	hist, err := s.store.Schemas(r.child.Name)
	if err != nil {
		return nil, readFailure(err)
	}
	out := make([][]byte, len(hist))
	for i, v := range hist {
		out[i] = v.Schema
	}
	return out, nil
}

func roleConflict(format string, args ...any) error {
	return domain.Refuse(domain.ErrConflict, "fan-out role conflict: "+fmt.Sprintf(format, args...))
}

func schemaGate(format string, args ...any) error {
	return domain.Refuse(domain.ErrConflict, "child schema incompatible with parent: "+fmt.Sprintf(format, args...))
}

// linkRefusal words a refused link entry (a race this node's checks could
// not see) in the spec's vocabulary: the apply rules' details name the
// rule they broke.
func linkRefusal(detail string) error {
	switch {
	case strings.Contains(detail, "children"):
		return domain.Refuse(domain.ErrConflict, "parent has reached the maximum number of children: "+detail)
	case strings.Contains(detail, "delay"):
		return domain.Refuse(domain.ErrConflict, "delay exceeds what the parent's retention can buffer: "+detail)
	case strings.Contains(detail, "schema"):
		return domain.Refuse(domain.ErrConflict, "child schema incompatible with parent: "+detail)
	case strings.Contains(detail, "budget"):
		return domain.Refuse(domain.ErrConflict, detail)
	}
	return domain.Refuse(domain.ErrConflict, "fan-out role conflict: "+detail)
}

// newEpoch returns a fresh attach epoch: 8 random bytes, lowercase hex
// (internals.md §6.3).
func (s *Service) newEpoch() (string, error) { return s.randomHex(attachEpochBytes, "epoch") }

// attachPoint asks every partition owner of parent for its committed high
// watermark (internals.md §6.3): local partitions by a peek, others over
// PeerStats, one call per owner. An unassigned partition has never taken a
// record: it starts at 0. Any owner that cannot be asked fails the whole
// attach with domain.ErrUnavailable, so nothing is linked.
func (s *Service) attachPoint(ctx context.Context, parent meta.Topic) ([]int64, error) {
	rows, err := s.store.Assignments(parent.Name)
	if err != nil {
		return nil, readFailure(err)
	}
	offsets := make([]int64, parent.Partitions)
	remote := map[string][]int32{}
	for _, r := range rows {
		if r.Partition < 0 || r.Partition >= parent.Partitions || !r.BelongsTo(parent.ID) || r.Owner == "" {
			continue
		}
		if r.Owner != s.self {
			remote[r.Owner] = append(remote[r.Owner], r.Partition)
			continue
		}
		ls, err := s.logs.LogStats(domain.PartitionRef{Topic: parent.Name, TopicID: domain.TopicID(parent.ID), Partition: r.Partition})
		if err != nil {
			return nil, attachPointFailure(parent.Name, r.Partition, err)
		}
		offsets[r.Partition] = ls.HighWatermark
	}
	for node, parts := range remote {
		if err := s.remoteHighWatermarks(ctx, parent, node, parts, offsets); err != nil {
			return nil, err
		}
	}
	return offsets, nil
}

func (s *Service) remoteHighWatermarks(ctx context.Context, parent meta.Topic, node string, parts []int32, into []int64) error {
	if s.peers == nil {
		return attachPointFailure(parent.Name, parts[0], fmt.Errorf("owner %s cannot be asked from this node", node))
	}
	ctx, cancel := context.WithTimeout(ctx, attachPointTimeout)
	defer cancel()
	stats, err := s.peers.PartitionStats(ctx, node, parent.Name, domain.TopicID(parent.ID), parts)
	if err == nil && len(stats) != len(parts) {
		err = fmt.Errorf("owner %s answered %d statistics for %d partitions", node, len(stats), len(parts))
	}
	if err != nil {
		return attachPointFailure(parent.Name, parts[0], err)
	}
	for i, p := range parts {
		into[p] = stats[i].HighWatermark
	}
	return nil
}

func attachPointFailure(topic string, p int32, err error) error {
	return domain.Refuse(domain.ErrUnavailable, fmt.Sprintf(
		"control plane temporarily unavailable: the attach point of %s/%d could not be read, nothing was linked: %v", topic, p, err))
}

// sameDocument compares two schema documents as JSON values: key order,
// spacing and number spelling do not matter.
func sameDocument(a, b []byte) bool {
	va, errA := decodeJSON(a)
	vb, errB := decodeJSON(b)
	return errA == nil && errB == nil && jsonEqual(va, vb)
}
