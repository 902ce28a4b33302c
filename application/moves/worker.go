package moves

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// errMoveEnded: the move is no longer this node's to finish (aborted,
// re-planned, or flipped by another attempt).
var errMoveEnded = errors.New("moves: the move ended")

// worker brings one inbound move to its flip (internals.md §11.3):
// pre-copy while the source serves, freeze, copy until two quiet passes,
// install, fence, flip.
type worker struct {
	r    *Runner
	mv   meta.Move
	ref  domain.PartitionRef
	cp   copier
	prog *progress
}

func (r *Runner) newWorker(mv meta.Move, prog *progress) *worker {
	ref := domain.PartitionRef{Topic: mv.Topic, TopicID: domain.TopicID(mv.TopicID), Partition: mv.Partition}
	copied := func(n int64) { r.d.Metrics.Copied(n); prog.copied(n) }
	return &worker{r: r, mv: mv, ref: ref, prog: prog, cp: copier{peers: r.d.Peers, inst: r.d.Installer, src: mv.From, ref: ref, copied: copied}}
}

// run makes one attempt. nil means the move is over (flipped, or no
// longer this node's); an error means try again after the backoff.
func (w *worker) run(ctx context.Context) error {
	if err := w.r.d.Installer.StagingReset(w.ref); err != nil {
		return err
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
	_, fenced, err := w.prepare(ctx, token)
	if err == nil && fenced.HighWatermark != l.HighWatermark {
		err = fmt.Errorf("source boundary %d, copied %d: %w", fenced.HighWatermark, l.HighWatermark, domain.ErrConflict)
	}
	if err = errors.Join(err, rearmed()); err != nil {
		return fmt.Errorf("fence of %s: %w", w.ref, err)
	}
	marker, err := w.marker(l.HighWatermark, false)
	if err != nil {
		return err
	}
	w.forgetConsumers()
	if err := w.r.d.Installer.Install(w.ref, marker); err != nil {
		return fmt.Errorf("install %s: %w", w.ref, err)
	}
	w.forgetConsumers()
	if err := rearmed(); err != nil {
		return fmt.Errorf("freeze of %s lapsed before the flip: %w", w.ref, err)
	}
	w.prog.phase(phaseFlipPending)
	return w.flip(ctx)
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
// precopyStallPassesMax passes that did not shrink.
func (w *worker) precopy(ctx context.Context) error {
	prev, stalls := int64(-1), 0
	for range precopyPassesMax {
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		l, err := w.r.d.Peers.TransferListing(cctx, w.mv.From, w.ref)
		cancel()
		if err != nil {
			return fmt.Errorf("list %s on %s: %w", w.ref, w.mv.From, err)
		}
		copied, err := w.cp.segments(ctx, l)
		if err != nil {
			return err
		}
		if copied <= convergedLagBytes {
			return nil
		}
		if prev >= 0 && copied >= prev {
			if stalls++; stalls >= precopyStallPassesMax {
				return nil
			}
		}
		prev = copied
		if err := sleep(ctx, passInterval); err != nil {
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
	return l, w.cp.side(ctx, l)
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

// flip proposes CompleteMove (internals.md §11.5). A refusal ends the
// move unless the partition is this node's already; an unknown outcome is
// read back from the replica until it is known.
func (w *worker) flip(ctx context.Context) error {
	env := meta.Envelope{Actor: "node:" + w.r.d.Self, AtMs: w.r.d.Clock.Now().UnixMilli(),
		Event: &meta.CompleteMove{Topic: w.mv.Topic, TopicID: w.mv.TopicID, Partition: w.mv.Partition, ExpectedOwner: w.mv.From, Target: w.r.d.Self}}
	applied, err := w.r.d.Store.Propose(ctx, env)
	if err == nil && applied.Result.OK() {
		w.r.d.Log.Info("partition moved here", slog.String("topic", w.mv.Topic), slog.Int("partition", int(w.mv.Partition)), slog.String("from", w.mv.From))
		return nil
	}
	row, ok, rerr := w.r.d.Store.Assignment(w.mv.Topic, w.mv.Partition)
	switch {
	case rerr != nil:
		return fmt.Errorf("flip of %s: %w; read back: %w", w.ref, errors.Join(err, applied.Result.Err()), rerr)
	case ok && row.Owner == w.r.d.Self:
		return nil
	case ok && row.Owner == w.mv.From && row.Target == w.r.d.Self && err != nil:
		return fmt.Errorf("flip of %s, outcome unknown: %w", w.ref, err) // retried: a new attempt re-freezes
	}
	w.r.d.Log.Warn("a partition move ended without its flip", slog.String("topic", w.mv.Topic),
		slog.Int("partition", int(w.mv.Partition)), slog.String("owner", row.Owner), slog.String("target", row.Target))
	return errMoveEnded
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
