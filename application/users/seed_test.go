package users_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/narad/narad/application/users"
	"github.com/narad/narad/domain/access"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// randomBytes is what the seeder's Random yields in these tests.
var randomBytes = bytes.Repeat([]byte{0xfb, 0x01, 0x7e}, 8)

// passwordFile stands in for the data dir's admin-password file.
type passwordFile struct {
	mu       sync.Mutex
	stored   []string // every password Store was given
	removed  int
	storeErr error
	// removeErrs fail the first Remove calls, one error each.
	removeErrs []error
	onStore    func(password string) // runs inside Store, before it returns
}

func (p *passwordFile) Store(password string) error {
	p.mu.Lock()
	p.stored = append(p.stored, password)
	err, on := p.storeErr, p.onStore
	p.mu.Unlock()
	if on != nil {
		on(password)
	}
	return err
}

func (p *passwordFile) Remove() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.removed++
	if len(p.removeErrs) > 0 {
		err := p.removeErrs[0]
		p.removeErrs = p.removeErrs[1:]
		return err
	}
	return nil
}

func (p *passwordFile) snapshot() ([]string, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.stored...), p.removed
}

// newSeeder builds a seeder over f's replica; password "" generates one.
func newSeeder(t *testing.T, f *fixture, password string, file *passwordFile) *users.Seeder {
	t.Helper()
	s, err := users.NewSeeder(f.store, f.hasher, f.clock, f.audit, users.SeedSource{Password: password,
		Random: bytes.NewReader(randomBytes), Store: file.Store, Remove: file.Remove, NodeID: "n1"})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func seedOnce(t *testing.T, s *users.Seeder) bool {
	t.Helper()
	seeded, err := s.SeedOnce(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return seeded
}

// Ensure that the leader seeds root once with the configured password, as
// root with the admin grant, audited without the password; a second
// attempt proposes nothing.
func TestSeedConfiguredPassword(t *testing.T) {
	t.Parallel()
	f := newEmptyFixture(t)
	file := &passwordFile{}
	s := newSeeder(t, f, "configured-1", file)
	if !seedOnce(t, s) {
		t.Fatal("not seeded")
	}
	root := f.user(t, access.RootUsername)
	if !root.Root || !reflect.DeepEqual(root.Grants, admin()) || !f.passwordIs(t, access.RootUsername, "configured-1") {
		t.Fatalf("root %+v", root)
	}
	if e := f.lastEntry(t); e.Type != meta.TypeSeedRootUser || e.Actor != "node:n1" || e.AtMs != startTime.UnixMilli() {
		t.Fatalf("entry %+v", e)
	}
	f.wantAudit(t, ports.AuditEvent{Event: ports.AuditRootSeeded, Actor: "node:n1", Subject: "user admin", Outcome: ports.AuditOK})
	f.wantNoSecretAudited(t, "configured-1", string(root.PasswordHash))
	index := f.meta.AppliedIndex()
	if !seedOnce(t, s) || f.meta.AppliedIndex() != index || f.audit.Count(ports.AuditRootSeeded) != 1 {
		t.Fatal("a second attempt proposed or audited again")
	}
	if stored, _ := file.snapshot(); len(stored) != 0 {
		t.Fatal("a configured password was stored")
	}
}

// Ensure that a generated password is 24 random bytes as base64url, stored
// before the seed is proposed, and is the seeded root's password.
func TestSeedGeneratedPasswordStoredFirst(t *testing.T) {
	t.Parallel()
	f := newEmptyFixture(t)
	file := &passwordFile{onStore: func(string) {
		if all, _ := f.meta.Users(); len(all) != 0 {
			t.Error("the seed was proposed before the password was stored")
		}
	}}
	if !seedOnce(t, newSeeder(t, f, "", file)) {
		t.Fatal("not seeded")
	}
	stored, removed := file.snapshot()
	want := base64.RawURLEncoding.EncodeToString(randomBytes)
	if len(stored) != 1 || stored[0] != want || removed != 0 {
		t.Fatalf("stored %q removed %d, want %q", stored, removed, want)
	}
	if !f.passwordIs(t, access.RootUsername, want) {
		t.Fatal("root's hash is not of the stored password")
	}
	f.wantNoSecretAudited(t, want)
}

// Ensure that no seed happens while any account exists (seeding never
// writes over or beside accounts), and that the verdict is final.
func TestSeedNotWhenAUserExists(t *testing.T) {
	t.Parallel()
	f := newEmptyFixture(t)
	f.propose(t, &meta.CreateUser{Username: "bob", PasswordHash: f.hash(t, "p")})
	file := &passwordFile{}
	seeded, err := newSeeder(t, f, "", file).SeedOnce(context.Background())
	if seeded || !errors.Is(err, users.ErrNotSeedable) {
		t.Fatalf("seeded=%v err=%v", seeded, err)
	}
	if all, _ := f.meta.Users(); len(all) != 1 {
		t.Fatalf("accounts %+v", all)
	}
	if stored, _ := file.snapshot(); len(stored) != 0 {
		t.Fatal("a password was stored")
	}
}

// Ensure that a follower never seeds, and reports a root it can read.
func TestSeedNotLeader(t *testing.T) {
	t.Parallel()
	f := newEmptyFixture(t)
	f.meta.SetLeader(false)
	file := &passwordFile{}
	s := newSeeder(t, f, "", file)
	if seedOnce(t, s) || f.meta.AppliedIndex() != 0 {
		t.Fatal("a follower seeded")
	}
	f.propose(t, &meta.SeedRootUser{Username: access.RootUsername, PasswordHash: f.hash(t, "other")})
	if !seedOnce(t, s) {
		t.Fatal("a follower did not report the root it reads")
	}
	if stored, _ := file.snapshot(); len(stored) != 0 {
		t.Fatal("a follower stored a password")
	}
}

// Ensure that a failed barrier, a failed random read, or a failed Store
// aborts the attempt before anything is proposed.
func TestSeedAbortsBeforeProposing(t *testing.T) {
	t.Parallel()
	f := newEmptyFixture(t)
	f.meta.FailBarrier(fmt.Errorf("no quorum: %w", meta.ErrUnavailable))
	if seeded, err := newSeeder(t, f, "pw", &passwordFile{}).SeedOnce(context.Background()); seeded || !errors.Is(err, meta.ErrUnavailable) {
		t.Fatalf("barrier failure: %v %v", seeded, err)
	}
	f.meta.FailBarrier(nil)

	storeErr := errors.New("disk full")
	file := &passwordFile{storeErr: storeErr}
	if seeded, err := newSeeder(t, f, "", file).SeedOnce(context.Background()); seeded || !errors.Is(err, storeErr) {
		t.Fatalf("store failure: %v %v", seeded, err)
	}

	s, err := users.NewSeeder(f.store, f.hasher, f.clock, f.audit, users.SeedSource{
		Random: strings.NewReader("short"), Store: file.Store, Remove: file.Remove})
	if err != nil {
		t.Fatal(err)
	}
	if seeded, err := s.SeedOnce(context.Background()); seeded || err == nil {
		t.Fatalf("random failure: %v %v", seeded, err)
	}
	if f.meta.AppliedIndex() != 0 {
		t.Fatal("an aborted attempt proposed")
	}
}

// Ensure that a seed losing the race to another node's removes its stored
// password and reports the other's root, without auditing a seed of its own.
func TestSeedLostRaceRemovesPassword(t *testing.T) {
	t.Parallel()
	f := newEmptyFixture(t)
	file := &passwordFile{onStore: func(string) {
		f.commit(t, &meta.SeedRootUser{Username: access.RootUsername, PasswordHash: f.hash(t, "theirs")})
	}}
	if !seedOnce(t, newSeeder(t, f, "", file)) {
		t.Fatal("not reported seeded")
	}
	if _, removed := file.snapshot(); removed != 1 {
		t.Fatalf("removed %d times", removed)
	}
	if !f.passwordIs(t, access.RootUsername, "theirs") || f.audit.Count(ports.AuditRootSeeded) != 0 {
		t.Fatal("the lost seed overwrote root or was audited")
	}

	g := newEmptyFixture(t)
	file = &passwordFile{onStore: func(string) {
		g.commit(t, &meta.CreateUser{Username: access.RootUsername, PasswordHash: g.hash(t, "not root")})
	}}
	seeded, err := newSeeder(t, g, "", file).SeedOnce(context.Background())
	if _, removed := file.snapshot(); seeded || !errors.Is(err, users.ErrNotSeedable) || removed != 1 {
		t.Fatalf("an account named admin appeared first: seeded=%v err=%v removed=%d", seeded, err, removed)
	}
	if g.user(t, access.RootUsername).Root {
		t.Fatal("the existing account became root")
	}
}

// Ensure that a failed removal of the unused password is reported, and
// tried again at the next attempt.
func TestSeedLostRaceRemoveRetried(t *testing.T) {
	t.Parallel()
	f := newEmptyFixture(t)
	file := &passwordFile{removeErrs: []error{errors.New("busy")}, onStore: func(string) {
		f.commit(t, &meta.SeedRootUser{Username: access.RootUsername, PasswordHash: f.hash(t, "theirs")})
	}}
	s := newSeeder(t, f, "", file)
	if seeded, err := s.SeedOnce(context.Background()); !seeded || err == nil {
		t.Fatalf("failed removal: seeded=%v err=%v", seeded, err)
	}
	if !seedOnce(t, s) {
		t.Fatal("not seeded")
	}
	if _, removed := file.snapshot(); removed != 2 {
		t.Fatalf("removed %d times, want 2", removed)
	}
	if !seedOnce(t, s) {
		t.Fatal("not seeded")
	}
	if _, removed := file.snapshot(); removed != 2 {
		t.Fatalf("removed %d times after it succeeded", removed)
	}
}

// Ensure that after a proposal of unknown outcome the next attempt proposes
// the same generated password again (never a new one that could overwrite
// the file of the one that applied).
func TestSeedRetryKeepsGeneratedPassword(t *testing.T) {
	t.Parallel()
	f := newEmptyFixture(t)
	file := &passwordFile{}
	s := newSeeder(t, f, "", file)
	f.meta.FailPropose(fmt.Errorf("timeout: %w", meta.ErrUnavailable))
	if seeded, err := s.SeedOnce(context.Background()); seeded || !errors.Is(err, meta.ErrUnavailable) {
		t.Fatalf("failed proposal: %v %v", seeded, err)
	}
	f.meta.FailPropose(nil)
	if !seedOnce(t, s) {
		t.Fatal("retry did not seed")
	}
	stored, removed := file.snapshot()
	if len(stored) != 2 || stored[0] != stored[1] || removed != 0 || !f.passwordIs(t, access.RootUsername, stored[0]) {
		t.Fatalf("stored %d passwords (same: %v), removed %d", len(stored), len(stored) == 2 && stored[0] == stored[1], removed)
	}
	if f.hasher.Hashes() != 1 || f.audit.Count(ports.AuditRootSeeded) != 1 {
		t.Fatalf("hashes %d, seeded lines %d", f.hasher.Hashes(), f.audit.Count(ports.AuditRootSeeded))
	}
}

// Ensure that CheckConfigured compares the configured password with root's,
// and has nothing to warn about without a password or a root.
func TestCheckConfigured(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newEmptyFixture(t)
	if ok, err := newSeeder(t, f, "pw", &passwordFile{}).CheckConfigured(ctx); !ok || err != nil {
		t.Fatalf("no root: %v %v", ok, err)
	}
	f.propose(t, &meta.SeedRootUser{Username: access.RootUsername, PasswordHash: f.hash(t, "pw")})
	for pw, want := range map[string]bool{"pw": true, "other": false, "": true} {
		if ok, err := newSeeder(t, f, pw, &passwordFile{}).CheckConfigured(ctx); ok != want || err != nil {
			t.Fatalf("password %q: %v %v, want %v", pw, ok, err, want)
		}
	}
}

// Ensure that Run seeds at once and returns, stops on ErrNotSeedable after
// reporting it, and returns when its context ends.
func TestRun(t *testing.T) {
	t.Parallel()
	f := newEmptyFixture(t)
	newSeeder(t, f, "pw", &passwordFile{}).Run(context.Background())
	if !f.user(t, access.RootUsername).Root {
		t.Fatal("Run did not seed")
	}

	g := newEmptyFixture(t)
	g.propose(t, &meta.CreateUser{Username: "bob", PasswordHash: g.hash(t, "p")})
	var reported []error
	s, err := users.NewSeeder(g.store, g.hasher, g.clock, g.audit, users.SeedSource{Password: "pw",
		Failed: func(err error) { reported = append(reported, err) }})
	if err != nil {
		t.Fatal(err)
	}
	s.Run(context.Background())
	if len(reported) != 1 || !errors.Is(reported[0], users.ErrNotSeedable) {
		t.Fatalf("reported %v", reported)
	}

	h := newEmptyFixture(t)
	h.meta.SetLeader(false)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); newSeeder(t, h, "pw", &passwordFile{}).Run(ctx) }()
	cancel()
	<-done
}

// Ensure that Run tries again a second later while this node does not lead,
// and seeds once it does.
func TestRunRetriesUntilSeeded(t *testing.T) {
	t.Parallel()
	f := newEmptyFixture(t)
	f.meta.SetLeader(false)
	asked := make(chan struct{}, 1)
	f.store.onIsLeader = func() {
		select {
		case asked <- struct{}{}:
		default:
		}
	}
	s := newSeeder(t, f, "pw", &passwordFile{})
	done := make(chan struct{})
	go func() { defer close(done); s.Run(context.Background()) }()
	<-asked // the first attempt found this node a follower
	f.meta.SetLeader(true)
	<-done
	if !f.user(t, access.RootUsername).Root {
		t.Fatal("Run returned without a root")
	}
}

// Ensure that NewSeeder refuses what could never seed safely.
func TestNewSeederRefusals(t *testing.T) {
	t.Parallel()
	f := newEmptyFixture(t)
	file := &passwordFile{}
	for name, src := range map[string]users.SeedSource{
		"no store":          {Random: bytes.NewReader(nil), Remove: file.Remove},
		"no remove":         {Random: bytes.NewReader(nil), Store: file.Store},
		"no random":         {Store: file.Store, Remove: file.Remove},
		"password too long": {Password: strings.Repeat("p", 73)},
	} {
		if _, err := users.NewSeeder(f.store, f.hasher, f.clock, f.audit, src); !errors.Is(err, users.ErrInvalidConfig) {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if _, err := users.NewSeeder(f.store, nil, f.clock, f.audit, users.SeedSource{Password: "p"}); !errors.Is(err, users.ErrInvalidConfig) {
		t.Fatalf("nil hasher: %v", err)
	}
}
