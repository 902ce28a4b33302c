package fake_test

import (
	"context"
	"errors"
	"testing"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
	"github.com/narad/narad/ports/porttest"
)

// ensure that the fake WAL keeps the IngressWAL port contract, reopen included.
func TestWALConformance(t *testing.T) {
	porttest.IngressWAL(t, porttest.IngressWALFeatures{Reopen: true}, func(t *testing.T) porttest.IngressWALOpener {
		var last *fake.WAL
		return func(t *testing.T) ports.IngressWAL {
			if last == nil {
				last = fake.NewWAL()
			} else {
				last = last.Reopen()
			}
			return last
		}
	})
}

// ensure that FailNextAppend fails exactly the next append and appends nothing.
func TestWALFailNextAppend(t *testing.T) {
	w := fake.NewWAL()
	rec := domain.IngressRecord{Topic: "t", Payload: []byte("p")}
	w.FailNextAppend(nil)
	if _, err := w.Append(context.Background(), rec); !errors.Is(err, domain.ErrWALFailed) {
		t.Fatalf("Append after FailNextAppend: %v, want ErrWALFailed", err)
	}
	if got := w.DurableNext(); got != 0 {
		t.Fatalf("DurableNext = %d after a failed append, want 0", got)
	}
	if seq, err := w.Append(context.Background(), rec); err != nil || seq != 0 {
		t.Fatalf("next Append = %d, %v; want 0, nil", seq, err)
	}
}

var (
	_ ports.Metrics = (*fake.Metrics)(nil)
	_ ports.Clock   = (*fake.Clock)(nil)
)
