package topics

import (
	"context"
	"sync"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
)

// ownerAsks groups the entries to ask owners for, one call per owner,
// owners in the order first met.
type ownerAsks struct {
	owners  []string
	entries map[string][]int // indexes into a describe's entries; a children listing's partitions
}

func (a *ownerAsks) add(owner string, entry int) {
	if a.entries == nil {
		a.entries = map[string][]int{}
	}
	if _, ok := a.entries[owner]; !ok {
		a.owners = append(a.owners, owner)
	}
	a.entries[owner] = append(a.entries[owner], entry)
}

// askable reports whether st is a placeholder another live owner can
// replace: this node can ask peers and the owner is alive with an address.
func (s *Service) askable(st PartitionStats) bool {
	return s.peers != nil && st.Status == StatusOwnerUnavailable && st.OwnerLiveness == LivenessUnreachable &&
		st.OwnerNode != "" && st.OwnerNode != s.self
}

// fetchRemote asks each owner of asks once for all its partitions' stats
// (askOwners bounds them). An owner that answers turns its entries into
// "ok" ones; any failure (no answer in time, a transport error, a refusal
// such as a moved partition or another incarnation on the owner) leaves
// them "unreachable" placeholders. Each call writes only its own owner's
// entries of out.
func (s *Service) fetchRemote(ctx context.Context, t meta.Topic, asks ownerAsks, out []PartitionStats) {
	askOwners(ctx, asks.owners, func(ctx context.Context, _ int, owner string) {
		s.askOwner(ctx, t, owner, asks.entries[owner], out)
	})
}

// askOwners runs ask for every owner (k its index in owners), at most
// ownersAskedInFlight at once, each within ownerAnswerTimeout and ctx, and
// returns once every ask returned. Owners still waiting for a slot when ctx
// ends are not asked.
func askOwners(ctx context.Context, owners []string, ask func(ctx context.Context, k int, owner string)) {
	slots := make(chan struct{}, ownersAskedInFlight)
	var wg sync.WaitGroup
	defer wg.Wait()
	for k, owner := range owners {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return
		}
		wg.Go(func() {
			defer func() { <-slots }()
			ctx, cancel := context.WithTimeout(ctx, ownerAnswerTimeout)
			defer cancel()
			ask(ctx, k, owner)
		})
	}
}

// askOwner asks owner for the partitions of entries and fills them in when
// it answers.
func (s *Service) askOwner(ctx context.Context, t meta.Topic, owner string, entries []int, out []PartitionStats) {
	parts := make([]int32, len(entries))
	for i, e := range entries {
		parts[i] = out[e].Index
	}
	stats, err := s.peers.PartitionStats(ctx, owner, t.Name, domain.TopicID(t.ID), parts)
	if err != nil || len(stats) != len(parts) {
		return
	}
	for i, e := range entries {
		out[e] = reported(parts[i], owner, stats[i])
	}
}
