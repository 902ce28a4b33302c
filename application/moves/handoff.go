package moves

import (
	"time"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// Leases counts a partition's outstanding leases on this node
// (consume.Service).
type Leases interface {
	InFlight(ref domain.PartitionRef) int
}

// Handoff is a move source's PrepareHandoff (internals.md §11.3 step 3): it
// freezes the partition (commits and new leases stop), waits up to
// leaseDrainMax, or a quarter of the freeze's TTL if shorter, for the leases
// outstanding there to be acked or released, and only then captures the
// listing, so those acks move with the partition instead of becoming
// redeliveries. A re-arm or fence (a token) captures at once.
type Handoff struct {
	Freezer ports.PartitionFreezer
	Leases  Leases
	Clock   ports.Clock
}

var _ ports.PartitionFreezer = (*Handoff)(nil)

// Freeze freezes (token empty, then drains and lists again under the same
// token) or re-arms and lists.
func (h *Handoff) Freeze(ref domain.PartitionRef, token string, ttl time.Duration) (string, ports.TransferListing, error) {
	tok, l, err := h.Freezer.Freeze(ref, token, ttl)
	if err != nil || token != "" || !h.drain(ref, min(leaseDrainMax, ttl/4)) {
		return tok, l, err
	}
	return h.Freezer.Freeze(ref, tok, ttl)
}

// drain polls until ref has no outstanding lease or wait passed; it
// reports whether it waited at all.
func (h *Handoff) drain(ref domain.PartitionRef, wait time.Duration) bool {
	if h.Leases.InFlight(ref) == 0 {
		return false
	}
	deadline := h.Clock.Now().Add(wait)
	t := time.NewTicker(leaseDrainPoll)
	defer t.Stop()
	for h.Leases.InFlight(ref) > 0 && h.Clock.Now().Before(deadline) {
		<-t.C
	}
	return true
}
