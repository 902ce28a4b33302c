package moves

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/narad/narad/domain/meta"
)

// outcomeForcePromoted labels a move flipped without its source.
const outcomeForcePromoted = "force_promoted"

// Reasons a move cannot finish on its own (narad_moves_blocked).
const (
	blockedSourceDead           = "source_dead"
	blockedSourceDeadCopyBehind = "source_dead_copy_behind"
	blockedCopyUnverifiable     = "copy_unverifiable"
)

// errCopyBehind: the staged copy does not hold the source's last listing
// whole, so it cannot be promoted.
var errCopyBehind = errors.New("moves: the staged copy is behind the source's last listing")

// sourceDeadFor reports how long the leader's verdict has held src dead
// (0 while alive or unknown): measured from its last heartbeat, stamped
// by the leader's clock, so the election grace that delays a dead verdict
// counts too.
func (r *Runner) sourceDeadFor(src string) time.Duration {
	members, err := r.d.Store.Members()
	if err != nil {
		return 0
	}
	for _, m := range members {
		if m.ID == src && m.Status == meta.StatusDead {
			return r.d.Clock.Now().Sub(time.Unix(m.LastHeartbeat, 0))
		}
	}
	return 0
}

// forcePromote installs the session's last listing of the source without
// a freeze and flips (internals.md §11.6): only once the session reached
// the source and staged that listing whole. Staging is cut back to
// exactly that listing first, so the copy recovers to its boundary and
// no further; the positions staged with it were read before it.
func (w *worker) forcePromote(ctx context.Context) error {
	l := w.sess.last
	if !w.sess.reached {
		return fmt.Errorf("force-promote of %s: the source was never reached: %w", w.ref, errCopyBehind)
	}
	keep := make(map[string]bool, len(l.Segments)+len(l.Side))
	for _, f := range l.Segments {
		keep[f.Name] = true
	}
	for _, f := range l.Side {
		keep[f.Name] = true
	}
	inst := w.r.d.Installer
	if err := inst.StagingKeep(w.ref, keep); err != nil {
		return err
	}
	for _, f := range l.Segments {
		have, err := inst.StagingSize(w.ref, f.Name)
		switch {
		case err != nil:
			return err
		case have < f.Size:
			return fmt.Errorf("force-promote of %s: %s staged to %d of %d bytes: %w", w.ref, f.Name, have, f.Size, errCopyBehind)
		case have > f.Size:
			if err := inst.StagingTruncate(w.ref, f.Name, f.Size); err != nil {
				return err
			}
		}
	}
	w.prog.phase(phaseFlipPending)
	if err := w.install(l.HighWatermark, true); err != nil {
		return err
	}
	return (&flipper{w: w, forced: true}).run(ctx)
}
