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
	for _, t := range topics {
		rows, err := v.store.Assignments(t.Name)
		if err != nil {
			return 0, nil, err
		}
		for _, r := range rows {
			if r.Owner == v.self {
				owned = append(owned, domain.PartitionRef{Topic: t.Name, TopicID: domain.TopicID(t.ID), Partition: r.Partition})
			}
		}
	}
	v.valid, v.versions, v.topics, v.owned = true, cur, len(topics), owned
	return v.topics, v.owned, nil
}
