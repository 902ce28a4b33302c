package remotes_test

import (
	"context"
	"encoding/base64"
	"testing"

	"github.com/narad/narad/application/remotes"
	"github.com/narad/narad/domain/meta"
)

func (f *fixture) remote(t *testing.T, name string) meta.Remote {
	t.Helper()
	all, err := f.meta.Remotes()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range all {
		if r.Name == name {
			return r
		}
	}
	t.Fatalf("no remote %s", name)
	return meta.Remote{}
}

// The cache opens a password once per credential version, and a
// limits-only change builds a new client without opening it again
// (internals.md §7.6).
func TestCacheOpensOncePerCredentialVersion(t *testing.T) {
	f := newFixture(t, true)
	f.create(t, "dr")
	r := f.remote(t, "dr")
	c1, state := f.cache.Client(r)
	if c1 == nil || state != remotes.StateReady {
		t.Fatalf("state %s", state)
	}
	if c2, _ := f.cache.Client(r); c2 != c1 || f.decrypts.get("dr") != 1 {
		t.Fatalf("second call rebuilt: decrypts %d", f.decrypts.get("dr"))
	}
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte("replicator:"+testPassword))
	if eps := f.transport.Endpoints(); len(eps) != 1 || eps[0].Authorization != want {
		t.Fatalf("endpoints %+v", eps)
	}
	if _, err := f.svc.Update(context.Background(), admin, "dr", remotes.UpdateRequest{Limits: remotes.LimitsPatch{MaxInFlight: ptr[int32](4)}}); err != nil {
		t.Fatal(err)
	}
	c3, _ := f.cache.Client(f.remote(t, "dr"))
	if c3 == c1 || f.decrypts.get("dr") != 1 || len(f.transport.Endpoints()) != 2 || f.transport.Endpoints()[1].Limits.MaxInFlight != 4 {
		t.Fatalf("limits change: decrypts %d endpoints %d", f.decrypts.get("dr"), len(f.transport.Endpoints()))
	}
	if _, err := f.svc.Update(context.Background(), admin, "dr", remotes.UpdateRequest{Password: []byte(testPassword + "-2")}); err != nil {
		t.Fatal(err)
	}
	if _, state := f.cache.Client(f.remote(t, "dr")); state != remotes.StateReady || f.decrypts.get("dr") != 2 {
		t.Fatalf("new password: state %s decrypts %d", state, f.decrypts.get("dr"))
	}
}

// A record that no longer matches what its seal was bound to, or a secret
// that cannot derive its key, leaves the credential unreadable; a node
// with security off is insecure.
func TestCacheStates(t *testing.T) {
	f := newFixture(t, true)
	f.create(t, "dr")
	r := f.remote(t, "dr")
	tampered := r
	tampered.Username = "someone-else"
	if c, state := f.cache.Client(tampered); c != nil || state != remotes.StateUnreadable {
		t.Fatalf("tampered: %s", state)
	}
	f.keyring.SetSecrets("secret-b", "")
	if _, state := f.cache.Client(r); state != remotes.StateUnreadable {
		t.Fatalf("rotated without previous: %s", state)
	}
	f.keyring.SetSecrets("secret-b", "secret-a")
	if _, state := f.cache.Client(r); state != remotes.StateReady {
		t.Fatalf("rotated with previous: %s", state)
	}
	insecure := remotes.NewCache(remotes.CacheDeps{Store: f.meta, Keyring: f.keyring, Transport: f.transport})
	if _, state := insecure.Client(r); state != remotes.StateInsecure {
		t.Fatalf("security off: %s", state)
	}
}

// Sync drops the entries of a deleted remote.
func TestCacheSyncDropsDeleted(t *testing.T) {
	f := newFixture(t, true)
	f.create(t, "dr")
	f.cache.Client(f.remote(t, "dr"))
	f.cache.Sync(nil)
	f.cache.Client(f.remote(t, "dr"))
	if f.decrypts.get("dr") != 2 {
		t.Fatalf("decrypts %d, want a rebuild after the sync", f.decrypts.get("dr"))
	}
}

// Conformance 247 (the use case): after a rotation, re-encrypt re-seals
// what the previous key sealed, reports the rest, and is safe to repeat.
func TestReencryptAfterARotation(t *testing.T) {
	f := newFixture(t, true)
	f.create(t, "dr")
	f.create(t, "backup")
	f.keyring.SetSecrets("secret-b", "secret-a")
	out, err := f.svc.Reencrypt(context.Background(), admin)
	if err != nil || len(out.Reencrypted) != 2 || len(out.AlreadyCurrent) != 0 || len(out.Failed) != 0 || out.KeyVersion == "" {
		t.Fatalf("first: %v %+v", err, out)
	}
	if r := f.remote(t, "dr"); r.KeyVersion != out.KeyVersion || r.CredentialVersion != 2 {
		t.Fatalf("remote after: %+v", r)
	}
	f.keyring.SetSecrets("secret-b", "")
	if _, state := f.cache.Client(f.remote(t, "dr")); state != remotes.StateReady {
		t.Fatalf("opens under the new key alone: %s", state)
	}
	out, err = f.svc.Reencrypt(context.Background(), admin)
	if err != nil || len(out.AlreadyCurrent) != 2 || len(out.Reencrypted) != 0 {
		t.Fatalf("repeat: %v %+v", err, out)
	}
	f.keyring.SetSecrets("secret-c", "")
	out, err = f.svc.Reencrypt(context.Background(), admin)
	if err != nil || len(out.Failed) != 2 || out.Failed[0].Reason != "key_unknown" {
		t.Fatalf("unknown key: %v %+v", err, out)
	}
}
