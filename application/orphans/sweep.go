package orphans

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/narad/narad/application/leaderconfirm"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// Confirmer is the leader confirmation the sweep asks before each delete.
type Confirmer interface {
	TopicGone(ctx context.Context, name string, id domain.TopicID) leaderconfirm.Decision
}

// Store is the local replica's topic view, read to skip live directories
// without asking the leader.
type Store interface {
	ports.MetadataTopics
}

// Sweeper reclaims orphaned topic directories.
type Sweeper struct {
	store   Store
	dirs    ports.TopicDirs
	confirm Confirmer
	log     *slog.Logger
}

// New returns a Sweeper; it panics on a missing dependency.
func New(store Store, dirs ports.TopicDirs, confirm Confirmer, log *slog.Logger) *Sweeper {
	if store == nil || dirs == nil || confirm == nil || log == nil {
		panic("orphans: nil dependency")
	}
	return &Sweeper{store: store, dirs: dirs, confirm: confirm, log: log}
}

// Outcome counts one pass.
type Outcome struct {
	Reclaimed int
	// Unconfirmed counts candidates kept because the leader could not be
	// asked: a later pass asks again.
	Unconfirmed int
}

// Run sweeps once and then again every 30 s until a pass confirms every
// candidate or ctx ends.
func (s *Sweeper) Run(ctx context.Context) {
	for {
		out, err := s.Sweep(ctx)
		if err != nil {
			s.log.Warn("orphan sweep failed", slog.Any("error", err))
		}
		if err == nil && out.Unconfirmed == 0 {
			return
		}
		t := time.NewTimer(retryInterval)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// Sweep runs one pass. A directory of a topic this replica holds at the
// same incarnation (or a marker-less one of a topic it holds) is live and
// never asked about.
func (s *Sweeper) Sweep(ctx context.Context) (Outcome, error) {
	var out Outcome
	dirs, err := s.dirs.TopicDirs()
	if err != nil {
		return out, fmt.Errorf("orphans: list: %w", err)
	}
	for _, d := range dirs {
		live, err := liveDir(s.store, d)
		if err != nil {
			return out, err
		}
		if live {
			continue
		}
		dec := s.confirm.TopicGone(ctx, d.Topic, d.ID)
		if !dec.Destroy {
			if dec.Err != nil {
				out.Unconfirmed++
			}
			s.log.Info("orphan sweep keeps a directory", slog.String("dir", d.Dir), slog.String("reason", dec.Reason), slog.Any("error", dec.Err))
			continue
		}
		if err := s.dirs.ReclaimTopicDir(d); err != nil {
			if errors.Is(err, domain.ErrConflict) {
				continue // it changed under the sweep: judged again next start
			}
			return out, fmt.Errorf("orphans: reclaim %s: %w", d.Dir, err)
		}
		out.Reclaimed++
		s.log.Warn("orphan sweep reclaimed a deleted incarnation's directory", slog.String("dir", d.Dir),
			slog.String("topic", d.Topic), slog.String("id", string(d.ID)), slog.String("reason", dec.Reason))
	}
	return out, nil
}
