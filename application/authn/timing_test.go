package authn_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/adapters/passwords"
	"github.com/narad/narad/application/authn"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
)

// ensure, with real bcrypt, that an unknown username costs about what a
// wrong password for an existing one does: the medians of 10 fresh
// attempts of each are within a factor of 2.
func TestUnknownUserCostsLikeWrongPassword(t *testing.T) {
	if testing.Short() {
		t.Skip("runs bcrypt")
	}
	store, clock, hasher := fake.NewMetaStore(), fake.NewClock(startTime), passwords.New()
	defer store.Close()
	hash, err := hasher.Hash(context.Background(), []byte("carol-secret"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Propose(context.Background(), meta.Envelope{Actor: "setup", AtMs: startTime.UnixMilli(),
		Event: &meta.CreateUser{Username: "carol", PasswordHash: hash}}); err != nil {
		t.Fatal(err)
	}
	auth, err := authn.New(store, store, hasher, clock, &fake.Audit{})
	if err != nil {
		t.Fatal(err)
	}
	defer auth.Close()
	if err := auth.Start(); err != nil {
		t.Fatal(err)
	}
	const n = 10
	var unknown, known []time.Duration
	for i := range n {
		clock.Advance(12 * time.Second) // a token back for carol
		start := time.Now()
		_, err := auth.Authenticate(context.Background(), "carol", []byte(fmt.Sprintf("guess-%d", i)), testRemote)
		known = append(known, time.Since(start))
		if !errors.Is(err, domain.ErrUnauthenticated) {
			t.Fatalf("wrong password %d: %v", i, err)
		}
		start = time.Now()
		_, err = auth.Authenticate(context.Background(), fmt.Sprintf("nobody%d", i), []byte(fmt.Sprintf("guess-%d", i)), testRemote)
		unknown = append(unknown, time.Since(start))
		if !errors.Is(err, domain.ErrUnauthenticated) {
			t.Fatalf("unknown user %d: %v", i, err)
		}
	}
	mu, mk := median(unknown), median(known)
	t.Logf("median unknown user %v, wrong password %v", mu, mk)
	if mu > 2*mk || mk > 2*mu {
		t.Fatalf("median unknown user %v vs wrong password %v: more than a factor of 2 apart", mu, mk)
	}
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
