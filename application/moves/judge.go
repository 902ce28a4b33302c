package moves

import (
	"fmt"

	"github.com/narad/narad/ports"
)

// staleAction is what the stale-copy sweep does with a former owner's copy.
type staleAction string

const (
	// staleReclaim deletes the copy: the owner vouches for everything in it.
	staleReclaim staleAction = "reclaim"
	// staleQuarantine sets the copy aside for an operator, never deleted.
	staleQuarantine staleAction = "quarantine"
)

// staleVerdict is the sweep's judgement of one copy: what to do, the
// boundary a reclaim is guarded at, and why.
type staleVerdict struct {
	Action staleAction `json:"action"`
	Guard  int64       `json:"guard"`
	Reason string      `json:"reason"`
}

// judgeStale judges this node's copy of a partition it no longer owns
// against the owner's listing (internals.md §11.6): the owner vouches for
// its boundary, never more than its move marker promoted. A copy ahead of
// that, or an owner that came back empty, holds no marker, or lacks a
// segment (or a segment's bytes) the copy has at or above the owner's
// oldest segment, is quarantined; anything else is reclaimed, guarded at
// the vouched boundary. A copy that holds no record is always reclaimed.
func judgeStale(local, owner ports.TransferListing) staleVerdict {
	if local.HighWatermark == 0 {
		return staleVerdict{Action: staleReclaim, Reason: "the copy holds no record"}
	}
	quarantine := func(format string, args ...any) staleVerdict {
		return staleVerdict{Action: staleQuarantine, Reason: fmt.Sprintf(format, args...)}
	}
	switch {
	case owner.HighWatermark == 0 || len(owner.Segments) == 0:
		return quarantine("the owner lists no records")
	case owner.Marker == nil:
		return quarantine("the owner holds records but no move marker")
	}
	vouched := min(owner.HighWatermark, owner.Marker.PromotedHighWatermark)
	if local.HighWatermark > vouched {
		return quarantine("the copy's boundary %d is ahead of the owner's vouched %d", local.HighWatermark, vouched)
	}
	sizes := make(map[string]int64, len(owner.Segments))
	for _, f := range owner.Segments {
		sizes[f.Name] = f.Size
	}
	oldest := owner.Segments[0].Name
	for _, f := range local.Segments {
		if f.Name < oldest {
			continue // the owner's retention passed it
		}
		size, ok := sizes[f.Name]
		switch {
		case !ok:
			return quarantine("the owner lacks segment %s", f.Name)
		case size < f.Size:
			return quarantine("the owner's segment %s holds %d bytes, the copy %d", f.Name, size, f.Size)
		}
	}
	return staleVerdict{Action: staleReclaim, Guard: vouched, Reason: fmt.Sprintf("the owner vouches for %d", vouched)}
}
