package meta_test

import (
	"errors"
	"testing"

	"github.com/narad/narad/domain/meta"
)

// sealKey and otherKey are two key versions (16 lowercase hex).
const (
	sealKey  = "000000000000000a"
	otherKey = "000000000000000b"
)

func sealed(key string) meta.RemoteCredential {
	return meta.RemoteCredential{SealedPassword: []byte("sealed"), KeyVersion: key, Fingerprint: "0123456789ab"}
}

// Ensure that the seal count of a key reads back as the state machine kept
// it: one per applied create, password change or re-encrypt under that key,
// nothing for a refused entry, a change without a new password or another
// key, and 0 for a key that never sealed.
func TestRemoteKeySealsCountsEverySealOfAKey(t *testing.T) {
	t.Parallel()
	kv := meta.NewMemKV()
	index := uint64(0)
	step := func(ev meta.Event) meta.Result {
		t.Helper()
		index++
		res, ms, err := meta.Step(kv, index, meta.Envelope{Actor: "admin", AtMs: 1, Event: ev}, meta.JournalKeep)
		if err != nil {
			t.Fatal(err)
		}
		if err := meta.WriteMutations(kv, ms); err != nil {
			t.Fatal(err)
		}
		return res
	}
	seals := func(key string) int64 {
		t.Helper()
		n, err := meta.RemoteKeySeals(kv, key)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := seals(sealKey); n != 0 {
		t.Fatalf("%d seals before any remote, want 0", n)
	}
	limits := meta.RemoteLimits{MaxInFlight: 1, RequestTimeoutMs: 5000, IdleConnTimeoutMs: 1000, ConnMaxAgeMs: 10000,
		CheckIntervalMs: 10000, Compression: "none"}
	put := &meta.PutRemote{Name: "dr", ID: "00000000000000f1", URL: "https://dr.example.com", Username: "r",
		Credential: sealed(sealKey), Limits: limits, Salt: make([]byte, 32)}
	if res := step(put); !res.OK() {
		t.Fatalf("create: %v", res)
	}
	if n := seals(sealKey); n != 1 {
		t.Fatalf("%d seals after a create, want 1", n)
	}
	if res := step(put); res.OK() {
		t.Fatal("a second create of the same remote applied")
	}
	cred := sealed(sealKey)
	if res := step(&meta.UpdateRemote{Name: "dr", ID: put.ID, ExpectedCredentialVersion: 1, Credential: &cred}); !res.OK() {
		t.Fatalf("re-encrypt: %v", res)
	}
	if res := step(&meta.UpdateRemote{Name: "dr", ID: put.ID, ExpectedCredentialVersion: 2, Limits: &limits}); !res.OK() {
		t.Fatalf("limits change: %v", res)
	}
	if n := seals(sealKey); n != 2 {
		t.Fatalf("%d seals after a create and a re-encrypt, want 2", n)
	}
	if n := seals(otherKey); n != 0 {
		t.Fatalf("%d seals of a key that never sealed, want 0", n)
	}
	other := sealed(otherKey)
	if res := step(&meta.UpdateRemote{Name: "dr", ID: put.ID, ExpectedCredentialVersion: 2, Credential: &other}); !res.OK() {
		t.Fatalf("rotation: %v", res)
	}
	if res := step(&meta.DeleteRemote{Name: "dr", ID: put.ID}); !res.OK() {
		t.Fatalf("delete: %v", res)
	}
	if a, b := seals(sealKey), seals(otherKey); a != 2 || b != 1 {
		t.Fatalf("after a rotation and a delete: %d and %d seals, want 2 and 1", a, b)
	}
}

// Ensure that a seal count that is not a decimal reads as a corrupt view,
// not as 0.
func TestRemoteKeySealsRefusesACorruptCount(t *testing.T) {
	t.Parallel()
	kv := meta.NewMemKV()
	if err := kv.Set([]byte("seals/"+sealKey), []byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := meta.RemoteKeySeals(kv, sealKey); !errors.Is(err, meta.ErrCorruptView) {
		t.Fatalf("err %v, want meta.ErrCorruptView", err)
	}
}
