package bootstrap

import (
	"context"
	"testing"
	"time"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/application/remotes"
	"github.com/narad/narad/application/shipping"
	"github.com/narad/narad/bootstrap/config"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// ensure that the sampler reads the seal count of the current key and,
// when the node has a previous secret, of the previous one from the
// metadata (narad_remote_key_seals), and reports no key before the first
// remote or without a previous secret.
func TestRemoteSamplerCountsSealsPerKey(t *testing.T) {
	store := fake.NewMetaStore()
	keys := fake.NewRemoteKeyring("new")
	keys.SetSecrets("new", "old")
	clock := fake.NewClock(time.UnixMilli(1_700_000_000_000))
	r := newRemoteSampler(config.Config{}, store, clock, keys)
	cache := remotes.NewCache(remotes.CacheDeps{Store: store, Keyring: keys})
	sampleRemotes(r, shipping.New(shipping.Deps{Store: store, Clients: cache, Clock: clock}), cache, nil)

	if s := r.sample(); s.HasCurrentKey || s.HasPreviousKey {
		t.Fatalf("a key before the first remote: %+v", s)
	}
	salt := make([]byte, 32)
	version := func(secret string) string {
		v, err := fake.NewRemoteKeyring(secret).KeyVersion(salt)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	sealed := func(secret string) meta.RemoteCredential {
		return meta.RemoteCredential{SealedPassword: []byte("sealed"), KeyVersion: version(secret), Fingerprint: "0123456789ab"}
	}
	limits := meta.RemoteLimits{MaxInFlight: 1, RequestTimeoutMs: 5000, IdleConnTimeoutMs: 1000, ConnMaxAgeMs: 10000,
		CheckIntervalMs: 10000, Compression: "none"}
	current := sealed("new")
	proposeSealEntries(t, store,
		&meta.PutRemote{Name: "dr", ID: "00000000000000f1", URL: "https://dr.example.com", Username: "r",
			Credential: sealed("old"), Limits: limits, Salt: salt},
		&meta.PutRemote{Name: "eu", ID: "00000000000000f2", URL: "https://eu.example.com", Username: "r",
			Credential: sealed("old"), Limits: limits},
		&meta.UpdateRemote{Name: "dr", ID: "00000000000000f1", ExpectedCredentialVersion: 1, Credential: &current},
	)
	s := r.sample()
	if !s.HasCurrentKey || s.CurrentKeySeals != 1 || !s.HasPreviousKey || s.PreviousKeySeals != 2 {
		t.Fatalf("after two seals under the previous key and a re-encrypt: %+v", s)
	}
	keys.SetSecrets("new", "")
	if s := r.sample(); !s.HasCurrentKey || s.CurrentKeySeals != 1 || s.HasPreviousKey {
		t.Fatalf("without a previous secret: %+v", s)
	}
}

func proposeSealEntries(t *testing.T, s ports.MetadataProposer, events ...meta.Event) {
	t.Helper()
	for _, ev := range events {
		got, err := s.Propose(context.Background(), meta.Envelope{Actor: "admin", AtMs: 1_700_000_000_000, Event: ev})
		if err != nil || !got.Result.OK() {
			t.Fatalf("%s: %v %v", ev.Subject(), got.Result, err)
		}
	}
}
