package fake_test

import (
	"context"
	"errors"
	"testing"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// ensure that the fake forwarder answers offers in order, per-handle
// refusals, and one armed whole-call failure.
func TestPeerForwarderScripts(t *testing.T) {
	t.Parallel()
	f := fake.NewPeerForwarder()
	ctx := context.Background()
	f.Offer("n2", domain.Delivery{Topic: "t", Partition: 1})
	if ds, err := f.ConsumeRemote(ctx, "n2", ports.RemoteConsume{Topic: "t"}); err != nil || len(ds) != 1 {
		t.Fatalf("offer: %v, %v", ds, err)
	}
	if ds, err := f.ConsumeRemote(ctx, "n2", ports.RemoteConsume{Topic: "t"}); err != nil || len(ds) != 0 {
		t.Fatalf("empty: %v, %v", ds, err)
	}
	h := domain.ReceiptHandle{Partition: 1, Offset: 2, Nonce: 3}
	f.RefuseHandle(h, domain.ErrLeaseGone)
	errs, err := f.SettleRemote(ctx, "n2", "t", []domain.ReceiptHandle{{Nonce: 1}, h}, ports.SettleAck)
	if err != nil || errs[0] != nil || !errors.Is(errs[1], domain.ErrLeaseGone) {
		t.Fatalf("settle: %v, %v", errs, err)
	}
	f.FailNext(nil)
	if _, err := f.SettleRemote(ctx, "n2", "t", []domain.ReceiptHandle{h}, ports.SettleAck); !errors.Is(err, fake.ErrFakePeerFailure) {
		t.Fatalf("armed failure: %v", err)
	}
	if len(f.Consumes()) != 2 || len(f.Settles()) != 2 {
		t.Fatalf("recorded %d consumes, %d settles", len(f.Consumes()), len(f.Settles()))
	}
}
