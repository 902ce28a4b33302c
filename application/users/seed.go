package users

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/narad/narad/domain/access"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// ErrNotSeedable reports a cluster that has accounts but no root: seeding
// happens only in a cluster without any account, so it never will here.
var ErrNotSeedable = errors.New("users: the cluster has accounts but no root account; the root is seeded only into a cluster without accounts")

// SeedSource is where the root account's password comes from (api.md §4.2).
type SeedSource struct {
	// Password is NARAD_ADMIN_PASSWORD; empty = generate one.
	Password string
	// Random supplies the generated password's bytes (crypto/rand in production).
	Random io.Reader
	// Store writes a generated password where the operator finds it (the node's
	// data dir file admin-password, mode 0600; bootstrap implements it); it is called
	// BEFORE the seed is proposed, so the password is never lost; a failure aborts
	// this attempt. Remove undoes it (the seed lost a race to another node's).
	Store  func(password string) error
	Remove func() error
	// NodeID names this node as the seed's actor ("node:<id>"); optional.
	NodeID string
	// Failed, when set, is told why an attempt of Run failed, for the
	// caller's log. The error never holds the password.
	Failed func(err error)
}

// Seeder seeds the root account once per cluster. Safe for concurrent use:
// attempts are serialised.
type Seeder struct {
	store  ports.MetadataStore
	hasher ports.PasswordHasher
	clock  ports.Clock
	audit  ports.AuditLog
	src    SeedSource
	actor  string

	mu sync.Mutex
	// pending is the seed last proposed whose winner is not known yet: it
	// is proposed again unchanged (a generated password is never replaced
	// while it may be the one applied) until a root account is read back.
	pending *rootSecret
}

// rootSecret is one seed's password and hash; generated marks a password
// this node made (and stored through SeedSource.Store).
type rootSecret struct {
	password  string
	hash      []byte
	generated bool
}

// NewSeeder returns a Seeder. Without a configured password, Random, Store
// and Remove are required; a configured password must obey the password
// rule (1 to 72 bytes).
func NewSeeder(store ports.MetadataStore, hasher ports.PasswordHasher, clock ports.Clock,
	audit ports.AuditLog, src SeedSource) (*Seeder, error) {
	if store == nil || hasher == nil || clock == nil || audit == nil {
		return nil, fmt.Errorf("nil dependency: %w", ErrInvalidConfig)
	}
	if src.Password == "" && (src.Random == nil || src.Store == nil || src.Remove == nil) {
		return nil, fmt.Errorf("a generated root password needs Random, Store and Remove: %w", ErrInvalidConfig)
	}
	if src.Password != "" {
		if err := access.ValidPassword("NARAD_ADMIN_PASSWORD", src.Password); err != nil {
			return nil, fmt.Errorf("%s: %w", err.Error(), ErrInvalidConfig)
		}
	}
	actor := "node"
	if src.NodeID != "" {
		actor = nodeActorPrefix + src.NodeID
	}
	return &Seeder{store: store, hasher: hasher, clock: clock, audit: audit, src: src, actor: actor}, nil
}

// SeedOnce seeds the root account `admin` if this node leads, is caught up (Barrier first,
// then re-read), and the cluster has no users at all. It reports whether the cluster
// now has a root account (seeded by this call or earlier, by anyone).
// ErrNotSeedable means it never will be seeded; any other error means retry.
func (s *Seeder) SeedOnce(ctx context.Context) (seeded bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if root, _, err := s.census(); err != nil || root != nil {
		return root != nil, s.settled(root, err)
	}
	if !s.store.IsLeader() {
		return false, nil
	}
	if err := s.store.Barrier(ctx); err != nil {
		return false, fmt.Errorf("users: seed: barrier: %w", err)
	}
	root, accounts, err := s.census()
	switch {
	case err != nil || root != nil:
		return root != nil, s.settled(root, err)
	case accounts > 0:
		return false, ErrNotSeedable
	}
	return s.propose(ctx)
}

// propose proposes the seed (the pending one, or a new one) and reads the
// root account back.
func (s *Seeder) propose(ctx context.Context) (bool, error) {
	sec := s.pending
	if sec == nil {
		var err error
		if sec, err = s.newSecret(ctx); err != nil {
			return false, err
		}
	}
	if sec.generated {
		if err := s.src.Store(sec.password); err != nil {
			return false, fmt.Errorf("users: seed: store the generated root password: %w", err)
		}
	}
	s.pending = sec
	env := meta.Envelope{Actor: s.actor, AtMs: s.clock.Now().UnixMilli(),
		Event: &meta.SeedRootUser{Username: access.RootUsername, PasswordHash: sec.hash}}
	applied, err := s.store.Propose(ctx, env)
	if err != nil {
		return false, fmt.Errorf("users: seed: propose (it may still apply): %w", err)
	}
	switch res := applied.Result; res.Code {
	case meta.CodeOK:
	case meta.CodeExists: // an account named admin appeared, not root
		return false, errors.Join(s.discard(), ErrNotSeedable)
	default:
		return false, fmt.Errorf("users: seed: %w", res.Err())
	}
	root, _, err := s.census()
	if err == nil && root == nil {
		err = errors.New("users: seed: applied, yet no root account is read back")
	}
	return root != nil, s.settled(root, err)
}

// newSecret hashes the configured password, or generates one.
func (s *Seeder) newSecret(ctx context.Context) (*rootSecret, error) {
	sec := &rootSecret{password: s.src.Password}
	if sec.password == "" {
		b := make([]byte, generatedPasswordBytes)
		if _, err := io.ReadFull(s.src.Random, b); err != nil {
			return nil, fmt.Errorf("users: seed: read random password: %w", err)
		}
		sec.password, sec.generated = base64.RawURLEncoding.EncodeToString(b), true
	}
	h, err := s.hasher.Hash(ctx, []byte(sec.password))
	if err != nil {
		return nil, fmt.Errorf("users: seed: hash the root password: %w", err)
	}
	sec.hash = h
	return sec, nil
}

// settled resolves the pending seed once root is known: ours is recorded
// in the audit log, another's makes a generated password useless, so it is
// removed. readErr passes through when root could not be read.
func (s *Seeder) settled(root *meta.User, readErr error) error {
	if readErr != nil || root == nil || s.pending == nil {
		return readErr
	}
	if bytes.Equal(root.PasswordHash, s.pending.hash) {
		s.pending = nil
		s.audit.Record(ports.AuditEvent{Event: ports.AuditRootSeeded, Actor: s.actor,
			Subject: "user " + root.Username, Outcome: ports.AuditOK})
		return nil
	}
	return s.discard()
}

// discard forgets the pending seed, removing its stored password if this
// node generated it. A failed removal is kept pending, so a later attempt
// removes it again.
func (s *Seeder) discard() error {
	sec := s.pending
	if sec == nil || !sec.generated {
		s.pending = nil
		return nil
	}
	if err := s.src.Remove(); err != nil {
		return fmt.Errorf("users: seed lost to another node's; remove the unused generated password: %w", err)
	}
	s.pending = nil
	return nil
}

// census reads the accounts: the root account, if any, and how many exist.
func (s *Seeder) census() (*meta.User, int, error) {
	all, err := s.store.Users()
	if err != nil {
		return nil, 0, fmt.Errorf("users: seed: read accounts: %w", err)
	}
	for i := range all {
		if all[i].Root {
			return &all[i], len(all), nil
		}
	}
	return nil, len(all), nil
}

// Run calls SeedOnce every second until the cluster has a root account or ctx ends.
// It also stops on ErrNotSeedable. Failed attempts are told to SeedSource.Failed.
func (s *Seeder) Run(ctx context.Context) {
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		seeded, err := s.SeedOnce(ctx)
		if err != nil && ctx.Err() == nil && s.src.Failed != nil {
			s.src.Failed(err)
		}
		if seeded || errors.Is(err, ErrNotSeedable) {
			return
		}
		timer.Reset(seedAttemptInterval)
	}
}

// CheckConfigured reports, when Password is set and a root exists, whether it is
// root's password (bcrypt compare); the caller warns at startup when it is not.
// With nothing to compare it reports true.
func (s *Seeder) CheckConfigured(ctx context.Context) (matches bool, err error) {
	if s.src.Password == "" {
		return true, nil
	}
	root, _, err := s.census()
	if err != nil || root == nil {
		return err == nil, err
	}
	ok, err := s.hasher.Matches(ctx, root.PasswordHash, []byte(s.src.Password))
	if err != nil {
		return false, fmt.Errorf("users: compare the configured root password: %w", err)
	}
	return ok, nil
}
