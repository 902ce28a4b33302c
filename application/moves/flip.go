package moves

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/narad/narad/application/ctxwait"
	"github.com/narad/narad/domain/meta"
)

// flipAction is what a destination does next about a flip whose proposal
// did not come back applied (internals.md §11.5).
type flipAction string

const (
	// flipDone: a leader read shows this node owns the partition.
	flipDone flipAction = "done"
	// flipRepropose: the flip can still commit and the freeze still holds
	// the copied boundary; propose again.
	flipRepropose flipAction = "repropose"
	// flipWait: the outcome is not known yet (no leader read, or a
	// proposal with an unknown outcome too recent); read again later.
	flipWait flipAction = "wait"
	// flipTakeOff: the flip did not and will not commit from this
	// install; the copy goes back to staging.
	flipTakeOff flipAction = "take_off"
)

// flipRead is a leader read of the partition's row after a barrier.
type flipRead struct {
	Failed        bool // no leader read (no quorum, no leader)
	Owner, Target string
}

// resolveFlip decides the next step of a flip from a leader read: owned
// here is done; still owned by the source and targeted here, the flip may
// commit, so re-propose while the freeze holds (canPropose) and otherwise
// wait out the settle period after the last proposal of unknown outcome
// before taking the copy off; anything else cannot commit and the copy
// comes off once that settle period passed.
func resolveFlip(self, source string, r flipRead, canPropose bool, sinceUnknown time.Duration) flipAction {
	switch {
	case r.Failed:
		return flipWait
	case r.Owner == self:
		return flipDone
	case r.Owner == source && r.Target == self && canPropose:
		return flipRepropose
	case sinceUnknown < flipSettleDuration:
		return flipWait
	}
	return flipTakeOff
}

// errFlipTakenOff: the install was taken back to staging; the move is
// retried while it still targets this node.
var errFlipTakenOff = errors.New("moves: the flip did not commit; the copy went back to staging")

// flipper proposes one install's flip and resolves its outcome.
type flipper struct {
	w *worker
	// rearm prolongs the freeze and reports whether the source still holds
	// the copied boundary; nil for a force-promote (no freeze).
	rearm  func(ctx context.Context) bool
	forced bool
}

// run proposes CompleteMove until a leader read settles the outcome. It
// answers nil when the partition is this node's, errFlipTakenOff once the
// copy is off the partition path again, or ctx's error.
func (f *flipper) run(ctx context.Context) error {
	w := f.w
	clock := w.r.d.Clock
	deadline := clock.Now().Add(flipReproposeWindow)
	var lastUnknown time.Time // the last proposal whose outcome is unknown; zero: none
	propose := true
	for {
		if propose {
			ok, unknown := f.propose(ctx)
			if ok {
				return nil
			}
			if unknown {
				lastUnknown = clock.Now()
			}
		}
		read := f.leaderRead(ctx)
		canPropose := false
		if !read.Failed && read.Owner == w.mv.From && read.Target == w.r.d.Self && clock.Now().Before(deadline) {
			canPropose = f.rearm == nil || f.rearm(ctx)
		}
		since := flipSettleDuration
		if !lastUnknown.IsZero() {
			since = clock.Now().Sub(lastUnknown)
		}
		switch resolveFlip(w.r.d.Self, w.mv.From, read, canPropose, since) {
		case flipDone:
			f.landed()
			return nil
		case flipRepropose:
			propose = true
		case flipWait:
			propose = false
		case flipTakeOff:
			if err := w.r.d.Installer.Uninstall(w.ref); err != nil {
				return fmt.Errorf("take the copy of %s off after a flip that did not commit: %w", w.ref, err)
			}
			w.forgetConsumers()
			w.r.d.Log.Warn("a partition's flip did not commit; its copy went back to staging", slog.String("topic", w.mv.Topic),
				slog.Int("partition", int(w.mv.Partition)), slog.String("owner", read.Owner), slog.String("target", read.Target))
			return errFlipTakenOff
		}
		if err := ctxwait.SleepErr(ctx, flipReadInterval); err != nil {
			return err
		}
	}
}

// propose sends CompleteMove once: ok when it applied and moved the
// partition here, unknown when the outcome is not known (an error is not
// proof of failure).
func (f *flipper) propose(ctx context.Context) (ok, unknown bool) {
	w := f.w
	env := meta.Envelope{Actor: "node:" + w.r.d.Self, AtMs: w.r.d.Clock.Now().UnixMilli(),
		Event: &meta.CompleteMove{Topic: w.mv.Topic, TopicID: w.mv.TopicID, Partition: w.mv.Partition, ExpectedOwner: w.mv.From, Target: w.r.d.Self}}
	applied, err := w.r.d.Store.Propose(ctx, env)
	if err == nil && applied.Result.OK() {
		f.landed()
		return true, false
	}
	if err != nil {
		w.r.d.Log.Debug("flip proposal outcome unknown", slog.String("topic", w.mv.Topic), slog.Int("partition", int(w.mv.Partition)), slog.Any("error", err))
	}
	return false, err != nil
}

// leaderRead reads the partition's row behind a barrier.
func (f *flipper) leaderRead(ctx context.Context) flipRead {
	w := f.w
	bctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if err := w.r.d.Store.Barrier(bctx); err != nil {
		return flipRead{Failed: true}
	}
	row, ok, err := w.r.d.Store.Assignment(w.mv.Topic, w.mv.Partition)
	switch {
	case err != nil:
		return flipRead{Failed: true}
	case !ok || !row.BelongsTo(w.mv.TopicID):
		return flipRead{} // unplaced or another incarnation: cannot commit
	}
	return flipRead{Owner: row.Owner, Target: row.Target}
}

func (f *flipper) landed() {
	w := f.w
	msg := "partition moved here"
	if f.forced {
		msg = "partition force-promoted here: its source was dead"
	}
	w.r.d.Log.Info(msg, slog.String("topic", w.mv.Topic), slog.Int("partition", int(w.mv.Partition)), slog.String("from", w.mv.From))
}
