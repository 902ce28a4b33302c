package authn

import (
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// watch bumps the users version for every applied user entry and snapshot
// restore until Close. When the subscription ends, every entry is stale
// until a new one is live: at once after meta.ErrWatchLagged, after
// watchRetryInterval otherwise.
func (a *Authenticator) watch(sub ports.MetaSubscription) {
	defer a.wg.Done()
	for sub != nil {
		err := a.follow(sub)
		sub.Close()
		a.watching.Store(false)
		a.version.Add(1)
		if a.ctx.Err() != nil {
			return
		}
		if !errors.Is(err, meta.ErrWatchLagged) && !a.sleep(watchRetryInterval) {
			return
		}
		sub = a.resubscribe()
	}
}

// follow reads sub until it ends (its error) or Close (nil).
func (a *Authenticator) follow(sub ports.MetaSubscription) error {
	for {
		select {
		case <-a.ctx.Done():
			return nil
		case c, ok := <-sub.C():
			if !ok {
				return sub.Err()
			}
			if c.Restored || changesUsers(c.Envelope.Event) {
				a.version.Add(1)
			}
		}
	}
}

// resubscribe watches again, retrying until it works or Close (nil). The
// version moves before entries count as current again, so nothing cached
// while nobody watched is trusted.
func (a *Authenticator) resubscribe() ports.MetaSubscription {
	for {
		sub, err := a.watcher.Watch(watchBufferCount)
		if err == nil {
			a.version.Add(1)
			a.watching.Store(true)
			return sub
		}
		if !a.sleep(watchRetryInterval) {
			return nil
		}
	}
}

// sleep waits d; false when Close came first.
func (a *Authenticator) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-a.ctx.Done():
		return false
	}
}

// changesUsers reports whether ev is an entry type that changes accounts.
func changesUsers(ev meta.Event) bool {
	if ev == nil {
		return false
	}
	switch ev.Type() {
	case meta.TypeCreateUser, meta.TypeUpdateUser, meta.TypeDeleteUser, meta.TypeSeedRootUser,
		meta.TypeSetUserPassword, meta.TypeSetUserGrants, meta.TypeDeleteUserReleaseTopics:
		return true
	}
	return false
}

// calibrate seeds the estimate of one verification: it hashes a random
// password and times checking it.
func (a *Authenticator) calibrate() error {
	var pw [calibrationPasswordBytes]byte
	_, _ = rand.Read(pw[:])
	defer clear(pw[:])
	hash, err := a.hasher.Hash(a.ctx, pw[:])
	if err != nil {
		return fmt.Errorf("authn: calibrate: hash: %w", err)
	}
	start := time.Now()
	ok, err := a.hasher.Matches(a.ctx, hash, pw[:])
	took := time.Since(start)
	switch {
	case err != nil:
		return fmt.Errorf("authn: calibrate: check: %w", err)
	case !ok:
		return fmt.Errorf("authn: calibrate: the hasher refused its own hash: %w", ErrInvalidConfig)
	}
	a.estimate.Store(int64(min(took, verifyEstimateMax)))
	return nil
}
