package fake_test

import (
	"context"
	"errors"
	"testing"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// ensure that the fake committer fails one node until healed, commits
// nothing meanwhile, counts every attempt, and leaves other nodes alone.
func TestPeerCommitterFailAndHeal(t *testing.T) {
	t.Parallel()
	p := fake.NewPeerCommitter()
	ctx := context.Background()
	req := ports.CommitRequest{Topic: "t", Records: []domain.Record{{Payload: []byte("x")}}}
	p.Fail("n2", fake.ErrFakePeerNotSent)
	for range 2 {
		if _, err := p.CommitBatch(ctx, "n2", req); !errors.Is(err, domain.ErrNotSent) {
			t.Fatalf("failing node: %v", err)
		}
	}
	if _, err := p.CommitBatch(ctx, "n3", req); err != nil {
		t.Fatalf("other node: %v", err)
	}
	p.Heal("n2")
	if first, err := p.CommitBatch(ctx, "n2", req); err != nil || first != 0 {
		t.Fatalf("healed node: %d, %v", first, err)
	}
	if p.Attempts("n2") != 3 || p.Attempts("n3") != 1 || len(p.Commits()) != 2 {
		t.Fatalf("attempts %d/%d, commits %d", p.Attempts("n2"), p.Attempts("n3"), len(p.Commits()))
	}
}
