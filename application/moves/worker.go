package moves

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/narad/narad/application/ctxwait"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// errMoveGone: the move's topic incarnation is gone; the next attempt
// finds the move no longer targeted and ends it.
var errMoveGone = errors.New("moves: the move's topic incarnation is gone")

// worker brings one inbound move to its flip (internals.md §11.3):
// pre-copy while the source serves, freeze, copy until two quiet passes,
// install, fence, flip.
type worker struct {
	r    *Runner
	mv   meta.Move
	ref  domain.PartitionRef
	cp   copier
	prog *progress
	sess *session
}

// session is what one move's attempts share (internals.md §11.3 step 1):
// whether the source ever answered, and its newest listing staged whole,
// the side files read before that listing, so a force-promote can install
// it (§11.6).
type session struct {
	reached bool
	last    ports.TransferListing
	// fresh asks the next attempt to empty staging first: the first one,
	// and any after an install that did not go back to staging.
	fresh bool
}

func (r *Runner) newWorker(mv meta.Move, prog *progress, sess *session) *worker {
	ref := domain.PartitionRef{Topic: mv.Topic, TopicID: domain.TopicID(mv.TopicID), Partition: mv.Partition}
	copied := func(n int64) { r.d.Metrics.Copied(n); prog.copied(n) }
	return &worker{r: r, mv: mv, ref: ref, prog: prog, sess: sess,
		cp: copier{peers: r.d.Peers, inst: r.d.Installer, src: mv.From, ref: ref, copied: copied}}
}

// run makes one attempt. nil means the move is over (flipped, or no
// longer this node's); an error means try again after the backoff.
func (w *worker) run(ctx context.Context) error {
	if w.sess.fresh {
		if err := w.r.d.Installer.StagingReset(w.ref); err != nil {
			return err
		}
		w.sess.fresh, w.sess.last = false, ports.TransferListing{}
	}
	if err := w.precopy(ctx); err != nil {
		return err
	}
	token, l, err := w.prepare(ctx, "")
	if err != nil {
		return err
	}
	w.prog.phase(phaseFrozen)
	rearmed, stop := w.keepFrozen(ctx, token)
	defer stop()
	if l, err = w.final(ctx, token, l); err != nil {
		return err
	}
	// The fence: the freeze still holds (a re-arm succeeds) and the source's
	// boundary is the one copied, so no commit landed behind the copy.
	if err := w.fence(ctx, token, l.HighWatermark); err != nil {
		return errors.Join(err, rearmed())
	}
	if err := rearmed(); err != nil {
		return fmt.Errorf("fence of %s: %w", w.ref, err)
	}
	if err := w.install(l.HighWatermark, false); err != nil {
		return err
	}
	if err := rearmed(); err != nil {
		return w.takeOff(fmt.Errorf("freeze of %s lapsed before the flip: %w", w.ref, err))
	}
	w.prog.phase(phaseFlipPending)
	f := &flipper{w: w, rearm: func(ctx context.Context) bool { return w.fence(ctx, token, l.HighWatermark) == nil }}
	return f.run(ctx)
}

// fence re-arms the freeze and checks the source still holds boundary hwm.
func (w *worker) fence(ctx context.Context, token string, hwm int64) error {
	_, fenced, err := w.prepare(ctx, token)
	if err == nil && fenced.HighWatermark != hwm {
		err = fmt.Errorf("source boundary %d, copied %d: %w", fenced.HighWatermark, hwm, domain.ErrConflict)
	}
	if err != nil {
		return fmt.Errorf("fence of %s: %w", w.ref, err)
	}
	return nil
}

// install swaps the staged copy in at hwm with its move marker and lowers
// the positions that came with it to hwm. Staging is gone afterwards: the
// next attempt starts it afresh unless a take-off brings it back.
func (w *worker) install(hwm int64, forced bool) error {
	// An install stamps the topic directory with the move's incarnation:
	// never one the topic was deleted and created again past.
	if t, ok, err := w.r.d.Store.Topic(w.mv.Topic); err != nil || !ok || (w.mv.TopicID != "" && t.ID != w.mv.TopicID) {
		return fmt.Errorf("install %s: the topic is no longer incarnation %s (%v): %w", w.ref, w.mv.TopicID, err, errMoveGone)
	}
	marker, err := w.marker(hwm, forced)
	if err != nil {
		return err
	}
	w.forgetConsumers()
	w.sess.fresh = true
	if err := w.r.d.Installer.Install(w.ref, marker); err != nil {
		return fmt.Errorf("install %s: %w", w.ref, err)
	}
	w.forgetConsumers()
	if err := w.r.d.Positions.clamp(w.ref, hwm, w.r.d.Log); err != nil {
		return w.takeOff(fmt.Errorf("install %s: %w", w.ref, err))
	}
	w.forgetConsumers()
	return nil
}

// takeOff takes an install that must not flip back to staging and
// answers cause.
func (w *worker) takeOff(cause error) error {
	if err := w.r.d.Installer.Uninstall(w.ref); err != nil {
		return errors.Join(cause, fmt.Errorf("take the copy of %s back to staging: %w", w.ref, err))
	}
	w.sess.fresh = false
	w.forgetConsumers()
	return cause
}

// marker is the move.marker of an install at hwm: the fan-out links of
// the partition's topic now, with their epochs (internals.md §11.4).
func (w *worker) marker(hwm int64, forced bool) (ports.MoveMarker, error) {
	links, err := w.r.d.Store.Links()
	if err != nil {
		return ports.MoveMarker{}, fmt.Errorf("links of %s for its move marker: %w", w.ref, err)
	}
	m := ports.MoveMarker{PromotedHighWatermark: hwm, Forced: forced, Links: []ports.MarkerLink{}}
	for _, l := range links {
		if l.Parent == w.mv.Topic {
			m.Links = append(m.Links, ports.MarkerLink{Child: l.Child, Epoch: l.Epoch})
		}
	}
	return m, nil
}

// forgetConsumers drops consumer state this node holds for the partition
// from an earlier ownership (before and after the install, §11.3 step 6).
func (w *worker) forgetConsumers() {
	if w.r.d.Consumers != nil {
		w.r.d.Consumers.ForgetPartition(w.ref)
	}
}

// precopy copies while the source keeps serving, until a pass copies at
// most convergedLagBytes, or after precopyPassesMax passes, or after
// precopyStallPassesMax passes that did not shrink. Each pass reads the
// side files the previous listing named before it lists again, so the
// positions staged never pass the boundary of the listing staged with
// them (internals.md §11.4): the session's force-promote copy.
func (w *worker) precopy(ctx context.Context) error {
	prev, stalls := int64(-1), 0
	side := w.sess.last.Side
	for range precopyPassesMax {
		if err := w.cp.side(ctx, side); err != nil {
			return err
		}
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		l, err := w.r.d.Peers.TransferListing(cctx, w.mv.From, w.ref)
		cancel()
		if err != nil {
			return fmt.Errorf("list %s on %s: %w", w.ref, w.mv.From, err)
		}
		w.sess.reached = true
		copied, err := w.cp.segments(ctx, l)
		if err != nil {
			return err
		}
		w.sess.last, side = l, l.Side
		if copied <= convergedLagBytes {
			return nil
		}
		if prev >= 0 && copied >= prev {
			if stalls++; stalls >= precopyStallPassesMax {
				return nil
			}
		}
		prev = copied
		if err := ctxwait.SleepErr(ctx, passInterval); err != nil {
			return err
		}
	}
	return nil
}

// final copies under the freeze until two consecutive passes copy no
// segment byte and see the same boundary, then copies the side files.
func (w *worker) final(ctx context.Context, token string, l ports.TransferListing) (ports.TransferListing, error) {
	quiet, last := 0, int64(-1)
	for quiet < quietPassesFinal {
		copied, err := w.cp.segments(ctx, l)
		if err != nil {
			return l, err
		}
		if copied == 0 && l.HighWatermark == last {
			quiet++
		} else {
			quiet = 0
		}
		last = l.HighWatermark
		if _, l, err = w.prepare(ctx, token); err != nil {
			return l, err
		}
	}
	return l, w.cp.side(ctx, l.Side)
}

// prepare freezes (token empty) or re-arms the source's freeze and lists.
func (w *worker) prepare(ctx context.Context, token string) (string, ports.TransferListing, error) {
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	tok, l, err := w.r.d.Peers.PrepareHandoff(cctx, w.mv.From, w.ref, token)
	if err != nil {
		return "", l, fmt.Errorf("freeze %s on %s: %w", w.ref, w.mv.From, err)
	}
	return tok, l, nil
}

// keepFrozen re-arms the freeze every freezeRearmInterval until stop;
// rearmed reports the first failure seen (the freeze may have lapsed).
func (w *worker) keepFrozen(ctx context.Context, token string) (rearmed func() error, stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var mu sync.Mutex
	var failed error
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(freezeRearmInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if _, _, err := w.prepare(ctx, token); err != nil {
					mu.Lock()
					failed = cmpErr(failed, err)
					mu.Unlock()
				}
			}
		}
	}()
	return func() error { mu.Lock(); defer mu.Unlock(); return failed }, func() { cancel(); <-done }
}

func cmpErr(old, err error) error {
	if old != nil {
		return old
	}
	return err
}
