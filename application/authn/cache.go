package authn

import (
	"bytes"
	"fmt"
	"slices"
	"time"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
)

// entry is one cached account: its record as of users version version, the
// credential verified against hash (if any) and the wrong ones recently
// seen. Guarded by Authenticator.mu; hash and user are replaced, never
// changed in place, so a copy of them may be read without the lock.
type entry struct {
	version   uint64
	hash      []byte
	user      meta.User // PasswordHash cleared
	verified  bool
	cred      credential // the verified credential, when verified
	negatives []negative // at most negativePerUserMax, oldest first
}

type negative struct {
	cred credential
	at   time.Time
}

// record is an account as one request saw it.
type record struct {
	hash []byte
	user meta.User
}

// lookupState is what lookup learnt about a username.
type lookupState int

const (
	known       lookupState = iota // the account exists; its record is returned
	unknownNew                     // no such account, and this pair was not seen lately
	unknownSeen                    // no such account, and this pair was answered lately
)

// unknownKey is an unknown username with the credential it was tried with.
type unknownKey struct {
	username string
	cred     credential
}

// unknownSeenAt is when an unknownKey was answered, at which users version.
type unknownSeenAt struct {
	version uint64
	at      time.Time
}

// hit is the hot path: a credential verified at users version v. It reads
// neither the store nor the clock and runs no password check.
func (a *Authenticator) hit(username string, cred *credential, fresh bool, v uint64) (meta.User, bool) {
	if !fresh {
		return meta.User{}, false
	}
	a.mu.RLock()
	defer a.mu.RUnlock()
	e := a.entries[username]
	if e == nil || e.version != v || !e.verified || !e.cred.equal(cred) {
		return meta.User{}, false
	}
	return e.user, true
}

// lookup returns username's record as of users version v: from its entry
// when that is current, else read from the store (refreshing the entry).
// An unknown pair answered at v within negativeTTL needs no store read.
func (a *Authenticator) lookup(username string, cred *credential, fresh bool, v uint64) (record, lookupState, error) {
	now := a.clock.Now()
	a.mu.RLock()
	if e := a.entries[username]; e != nil && fresh && e.version == v {
		r := record{hash: e.hash, user: e.user}
		a.mu.RUnlock()
		return r, known, nil
	}
	seen, ok := a.unknown[unknownKey{username, *cred}]
	a.mu.RUnlock()
	if ok && fresh && seen.version == v && now.Sub(seen.at) < negativeTTL {
		return record{}, unknownSeen, nil
	}
	u, ok, err := a.users.User(username)
	switch {
	case err != nil:
		return record{}, known, fmt.Errorf("authn: read user: %w: %w", domain.ErrAuthUnavailable, err)
	case !ok:
		a.forget(username)
		return record{}, unknownNew, nil
	}
	return a.refresh(username, u, v), known, nil
}

// refresh stores u, read at users version v, in username's entry: the same
// hash keeps the verified and wrong credentials (new grants and root are
// taken), another hash clears them.
func (a *Authenticator) refresh(username string, u meta.User, v uint64) record {
	hash := u.PasswordHash
	u.PasswordHash = nil
	a.mu.Lock()
	defer a.mu.Unlock()
	e := a.entries[username]
	switch {
	case e == nil:
		if len(a.entries) >= cachedUsersMax {
			a.evictLocked()
		}
		e = &entry{}
		a.entries[username] = e
	case v < e.version: // a later read got here first
		return record{hash: e.hash, user: e.user}
	}
	if !bytes.Equal(e.hash, hash) {
		e.hash, e.verified, e.cred, e.negatives = hash, false, credential{}, nil
	}
	e.user, e.version = u, v
	return record{hash: e.hash, user: e.user}
}

// forget drops the entry of an account the store no longer holds.
func (a *Authenticator) forget(username string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.entries, username)
}

// evictLocked makes room for one entry. Entries hold no throttle state, so
// dropping any one costs at most a verification later.
func (a *Authenticator) evictLocked() {
	for name := range a.entries {
		delete(a.entries, name)
		return
	}
}

// rejects reports whether cred was found wrong within negativeTTL.
func (e *entry) rejects(cred *credential, now time.Time) bool {
	for i := range e.negatives {
		if now.Sub(e.negatives[i].at) < negativeTTL && e.negatives[i].cred.equal(cred) {
			return true
		}
	}
	return false
}

// addNegative remembers cred as wrong, dropping expired entries and, at
// negativePerUserMax, the oldest.
func (e *entry) addNegative(cred credential, now time.Time) {
	e.negatives = slices.DeleteFunc(e.negatives, func(n negative) bool {
		return now.Sub(n.at) >= negativeTTL || n.cred == cred
	})
	if len(e.negatives) >= negativePerUserMax {
		e.negatives = slices.Delete(e.negatives, 0, len(e.negatives)-negativePerUserMax+1)
	}
	e.negatives = append(e.negatives, negative{cred: cred, at: now})
}

// rememberUnknown records an unknown pair answered at users version v; at
// unknownPairsMax an arbitrary pair makes room (a scan for stale ones would
// hold the lock for the whole map on every unknown request under a flood).
func (a *Authenticator) rememberUnknown(username string, cred *credential, v uint64) {
	now := a.clock.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.unknown) >= unknownPairsMax {
		for k := range a.unknown {
			delete(a.unknown, k)
			break
		}
	}
	a.unknown[unknownKey{username, *cred}] = unknownSeenAt{version: v, at: now}
}
