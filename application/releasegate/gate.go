package releasegate

import (
	"context"
	"errors"
	"fmt"

	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// ErrServersUnread: the Raft configuration could not be read, so the gate
// cannot tell whether a record-less server holds the type back.
var ErrServersUnread = errors.New("releasegate: the Raft configuration could not be read")

// Members reads the member records.
type Members interface {
	Members() ([]meta.Member, error)
}

// Servers reads the metadata shard's Raft configuration; the gate counts
// servers without a member record as the oldest release.
type Servers interface {
	Membership(ctx context.Context) (ports.RaftMembership, error)
}

// Check reports who holds entry type t back, as seen from node self whose
// build applies through meta.AppliesThroughType: held is false when every
// member and server applies t. servers may be nil (member records only).
// A failed read of the members is returned as it came; a failed read of
// the servers wraps ErrServersUnread.
func Check(ctx context.Context, self string, members Members, servers Servers, t meta.EntryType) (holder meta.Holder, held bool, err error) {
	ms, err := members.Members()
	if err != nil {
		return meta.Holder{}, false, err
	}
	var ids []uint64
	if servers != nil {
		m, err := servers.Membership(ctx)
		if err != nil {
			return meta.Holder{}, false, fmt.Errorf("%w: %w", ErrServersUnread, err)
		}
		for id := range m.Voters {
			ids = append(ids, id)
		}
		for id := range m.NonVoters {
			ids = append(ids, id)
		}
	}
	ok, h := meta.NewGate(self, meta.AppliesThroughType, ms, ids).Allows(t)
	return h, !ok, nil
}

// Node names a holder for an answer: its member id, or the Raft server
// without a member record.
func Node(h meta.Holder) string {
	if h.MemberID != "" {
		return h.MemberID
	}
	return fmt.Sprintf("raft server %d", h.ReplicaID)
}
