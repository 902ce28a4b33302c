package bootstrap

import (
	"sync"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// ownedViews are the metadata views the scrape-time gauges depend on.
var ownedViews = meta.Views(0).With(meta.ViewTopics).With(meta.ViewAssignments)

// ownedView is what the scrape-time gauges read of the metadata: how many
// topics there are and which partitions this node owns. Reading it decodes
// every topic and assignment row, so it is computed again only when the
// topic or assignment view moved (meta.Versions), not at every scrape: an
// idle node with thousands of topics pays for it once, not per scrape.
type ownedView struct {
	store ports.MetadataStore
	self  string

	mu       sync.Mutex
	valid    bool
	versions meta.Versions
	topics   int
	owned    []domain.PartitionRef
	// colocated counts child partitions p placed on the node that owns
	// their parent's partition p (narad_colocated_child_partitions, api.md
	// §5.3): the same count on every node, read from its replica.
	colocated int
}

func newOwnedView(store ports.MetadataStore, self string) *ownedView {
	return &ownedView{store: store, self: self}
}

// read returns the topic count and this node's partitions (callers must
// not modify the slice).
func (v *ownedView) read() (int, []domain.PartitionRef, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	cur := v.store.Versions()
	if v.valid && !cur.Moved(v.versions, ownedViews) {
		return v.topics, v.owned, nil
	}
	topics, err := v.store.ListTopics("", 0)
	if err != nil {
		return 0, nil, err
	}
	var owned []domain.PartitionRef
	owners := make(map[string]map[int32]string, len(topics))
	for _, t := range topics {
		rows, err := v.store.Assignments(t.Name)
		if err != nil {
			return 0, nil, err
		}
		byPart := make(map[int32]string, len(rows))
		for _, r := range rows {
			byPart[r.Partition] = r.Owner
			if r.Owner == v.self {
				owned = append(owned, domain.PartitionRef{Topic: t.Name, TopicID: domain.TopicID(t.ID), Partition: r.Partition})
			}
		}
		owners[t.Name] = byPart
	}
	v.valid, v.versions, v.topics, v.owned = true, cur, len(topics), owned
	v.colocated = colocatedChildren(topics, owners)
	return v.topics, v.owned, nil
}

// colocatedChildren counts child partitions p whose owner also owns their
// parent's partition p (partitions the parent lacks count for nothing).
func colocatedChildren(topics []meta.Topic, owners map[string]map[int32]string) int {
	n := 0
	for _, t := range topics {
		if t.Parent == "" || t.IsRemoteStub() {
			continue
		}
		parent := owners[t.Parent]
		for p, owner := range owners[t.Name] {
			if po, ok := parent[p]; ok && owner != "" && po == owner {
				n++
			}
		}
	}
	return n
}

// colocatedCount is the last count of co-located child partitions.
func (v *ownedView) colocatedCount() (int, error) {
	if _, _, err := v.read(); err != nil {
		return 0, err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.colocated, nil
}
