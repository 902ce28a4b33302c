package releasegate_test

import (
	"context"
	"errors"
	"testing"

	"github.com/narad/narad/application/releasegate"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

type members struct {
	list []meta.Member
	err  error
}

func (m members) Members() ([]meta.Member, error) { return m.list, m.err }

type servers struct {
	m   ports.RaftMembership
	err error
}

func (s servers) Membership(context.Context) (ports.RaftMembership, error) { return s.m, s.err }

func member(id string, applies meta.EntryType) meta.Member {
	return meta.Member{ID: id, EntryTypes: applies}
}

// Ensure that the gate passes a type every member and server applies and
// names who holds it back otherwise: a member on an older release, or a
// Raft server without a member record.
func TestCheck(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	newest := meta.AppliesThroughType
	all := members{list: []meta.Member{member("n1", newest), member("n2", newest)}}
	if _, held, err := releasegate.Check(ctx, "n1", all, nil, meta.TypeSetTopicRedelivery); held || err != nil {
		t.Fatalf("all current: held=%v err=%v", held, err)
	}
	old := members{list: []meta.Member{member("n1", newest), member("n2", meta.TypeDeleteRemote)}}
	h, held, err := releasegate.Check(ctx, "n1", old, nil, meta.TypeSetTopicRedelivery)
	if !held || err != nil || releasegate.Node(h) != "n2" {
		t.Fatalf("older member: %+v held=%v err=%v", h, held, err)
	}
	if _, held, _ := releasegate.Check(ctx, "n1", old, nil, meta.TypeDeleteRemote); held {
		t.Fatal("a type the older member applies was held back")
	}
	stray := uint64(4242)
	raft := servers{m: ports.RaftMembership{Voters: map[uint64]string{meta.ReplicaID("n1"): "a", meta.ReplicaID("n2"): "b", stray: "c"}}}
	h, held, err = releasegate.Check(ctx, "n1", all, raft, meta.TypeSetTopicRedelivery)
	if !held || err != nil || releasegate.Node(h) != "raft server 4242" {
		t.Fatalf("record-less server: %+v held=%v err=%v", h, held, err)
	}
	boom := errors.New("boom")
	if _, _, err := releasegate.Check(ctx, "n1", all, servers{err: boom}, meta.TypeSetTopicRedelivery); !errors.Is(err, releasegate.ErrServersUnread) || !errors.Is(err, boom) {
		t.Fatalf("servers unread: %v", err)
	}
	if _, _, err := releasegate.Check(ctx, "n1", members{err: boom}, nil, meta.TypeSetTopicRedelivery); !errors.Is(err, boom) || errors.Is(err, releasegate.ErrServersUnread) {
		t.Fatalf("members unread: %v", err)
	}
}
