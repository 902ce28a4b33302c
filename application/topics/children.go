package topics

import (
	"context"
	"github.com/narad/narad/domain/access"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// FanoutLag reads where the fan-out cursors of the parent partitions this
// node owns stand, in ports.PeerFanoutLag's order and with its rules
// (application/fanout's LagReader).
type FanoutLag interface {
	FanoutLag(ctx context.Context, parent string, parentID domain.TopicID, parts []int32, children []ports.ChildEpoch) ([]ports.CursorLag, error)
}

// Children is a children listing (api.md §2.11).
type Children struct {
	Parent   string
	ParentID string
	Children []ChildLag // in attach order; empty, never nil, without children
}

// ChildLag is one child of a listing. LagMessages is the parent records
// not yet copied, summed over the parent's partitions; LagComplete says
// every partition reported, otherwise LagMessages is a lower bound.
type ChildLag struct {
	Name        string
	DelayMs     int64
	LagMessages int64
	LagComplete bool
}

// ListChildren lists parent's children in attach order with their lag
// (api.md §2.11). A standalone topic or a child lists none. A partition's
// lag is its high watermark minus the cursor's next offset (never below
// 0), read by the partition's owner: this node's own partitions locally,
// other live owners' over the peer port, one call per owner, at most
// ownersAskedInFlight at once, each within ownerAnswerTimeout (and
// ctx). A child's lag is complete only when every parent partition
// reported: an owner that is dead, unknown, unreachable, slow or refusing,
// and a cursor that has not anchored at the child's current epoch, leave
// it incomplete.
//
// An unassigned parent partition counts as reported with lag 0: nothing
// can be committed to a partition before it has an owner (the attach point
// starts it at 0), so no record of it awaits a copy, and a placement that
// waits for a live member must not hold every child's lag incomplete.
//
// A remote child's lag is its cursors' like any child's: parent records
// the remote has not accepted yet.
func (s *Service) ListChildren(ctx context.Context, caller access.Principal, parent string) (Children, error) {
	t, err := s.readTopic(parent)
	if err == nil {
		err = mayRead(caller, t)
	}
	if err != nil {
		return Children{}, err
	}
	out := Children{Parent: t.Name, ParentID: t.ID, Children: make([]ChildLag, 0, len(t.Children))}
	var asked []ports.ChildEpoch
	var entries []int // out.Children index of each asked child
	for _, name := range t.Children {
		c, ok, err := s.store.Topic(name)
		if err != nil {
			return Children{}, readFailure(err)
		}
		entry := ChildLag{Name: name}
		if ok && c.Parent == t.Name {
			entry.DelayMs, entry.LagComplete = c.FanoutDelayMs, true
			asked = append(asked, ports.ChildEpoch{Child: c.Name, Epoch: c.AttachEpoch})
			entries = append(entries, len(out.Children))
		}
		out.Children = append(out.Children, entry)
	}
	if len(asked) == 0 {
		return out, nil
	}
	tally, err := s.childLags(ctx, t, asked)
	if err != nil {
		return Children{}, err
	}
	for j, e := range entries {
		out.Children[e].LagMessages = tally.messages[j]
		out.Children[e].LagComplete = tally.complete[j]
	}
	return out, nil
}

// lagTally sums one listing's children, index by index with the asked
// children.
type lagTally struct {
	messages []int64
	complete []bool
}

func newLagTally(n int) lagTally {
	t := lagTally{messages: make([]int64, n), complete: make([]bool, n)}
	for j := range t.complete {
		t.complete[j] = true
	}
	return t
}

// add counts one owner's answer for parts: nil (no answer) or one entry
// per (partition, child) pair.
func (t lagTally) add(parts int, got []ports.CursorLag) {
	n := len(t.messages)
	if len(got) != parts*n {
		got = nil // an answer of the wrong shape is no answer
	}
	for i := range parts {
		for j := range n {
			if got == nil || !got[i*n+j].Reported {
				t.complete[j] = false
				continue
			}
			l := got[i*n+j]
			t.messages[j] += max(0, l.HighWatermark-l.NextOffset)
		}
	}
}

// childLags groups t's partitions by owner, asks each owner once (this
// node locally first) and sums the answers.
func (s *Service) childLags(ctx context.Context, t meta.Topic, children []ports.ChildEpoch) (lagTally, error) {
	owners, members, err := s.owners(t)
	if err != nil {
		return lagTally{}, err
	}
	tally := newLagTally(len(children))
	var asks ownerAsks
	for p := range t.Partitions {
		switch owner := owners[p]; {
		case owner == "":
			// Unassigned: nothing committed, reported with lag 0.
		case owner == s.self || remoteLiveness(owner, members) == LivenessUnreachable:
			asks.add(owner, int(p))
		default:
			tally.add(1, nil) // a dead or unknown owner cannot report
		}
	}
	answers := s.askLagOwners(ctx, t, asks, children)
	for k, owner := range asks.owners {
		tally.add(len(asks.entries[owner]), answers[k])
	}
	return tally, nil
}

// askLagOwners asks every owner of asks for its partitions' cursors: the
// others over node RPC (askOwners bounds them), and this node through its
// local reader while they answer. answers[k] is asks.owners[k]'s answer,
// nil when it gave none; each call writes only its own.
func (s *Service) askLagOwners(ctx context.Context, t meta.Topic, asks ownerAsks, children []ports.ChildEpoch) [][]ports.CursorLag {
	answers := make([][]ports.CursorLag, len(asks.owners))
	local := -1
	var remote []string
	var at []int // remote[i] is asks.owners[at[i]]
	for k, owner := range asks.owners {
		if owner == s.self {
			local = k
			continue
		}
		remote, at = append(remote, owner), append(at, k)
	}
	asked := make(chan struct{})
	go func() {
		defer close(asked)
		if s.peerLag == nil {
			return
		}
		askOwners(ctx, remote, func(ctx context.Context, i int, owner string) {
			answers[at[i]] = s.remoteLag(ctx, t, owner, asIndexes(asks.entries[owner]), children)
		})
	}()
	if local >= 0 {
		answers[local] = s.localLag(ctx, t, asIndexes(asks.entries[s.self]), children)
	}
	<-asked
	return answers
}

func (s *Service) localLag(ctx context.Context, t meta.Topic, parts []int32, children []ports.ChildEpoch) []ports.CursorLag {
	if s.fanoutLag == nil {
		return nil
	}
	got, err := s.fanoutLag.FanoutLag(ctx, t.Name, domain.TopicID(t.ID), parts, children)
	if err != nil {
		return nil
	}
	return got
}

func (s *Service) remoteLag(ctx context.Context, t meta.Topic, owner string, parts []int32, children []ports.ChildEpoch) []ports.CursorLag {
	got, err := s.peerLag.FanoutLag(ctx, owner, t.Name, domain.TopicID(t.ID), parts, children)
	if err != nil {
		return nil
	}
	return got
}

func asIndexes(entries []int) []int32 {
	out := make([]int32, len(entries))
	for i, e := range entries {
		out[i] = int32(e)
	}
	return out
}
