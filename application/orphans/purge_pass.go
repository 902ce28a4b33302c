package orphans

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// verdict is what a pass did with one directory.
type verdict int

const (
	purged      verdict = iota // reclaimed
	live                       // the leader holds its incarnation: nothing to purge
	doubtful                   // kept for now: ask again at the next pass
	unconfirmed                // kept: the leader could not be asked, so stop the pass
)

// pass lists this node's topic directories and purges each one that belongs
// to a pending deleted incarnation (every dead one while a rescan is owed).
// A pending incarnation is settled once the pass judged all its directories
// without doubt; otherwise it stays for the next pass, and so does the
// rescan. A pass the leader cannot answer stops at once, settling nothing.
func (p *Purger) pass(ctx context.Context) {
	dirs, err := p.dirs.TopicDirs()
	if err != nil {
		p.log.Warn("purge kept every directory: listing failed", slog.Any("error", err))
		return
	}
	doubt := map[incarnation]bool{}
	rescanDoubt := false
	for _, d := range dirs {
		keys := p.pendingFor(d)
		if len(keys) == 0 && !p.rescan {
			continue
		}
		v := p.judge(ctx, d)
		if v == unconfirmed || ctx.Err() != nil {
			return
		}
		if v == doubtful {
			rescanDoubt = true
			for _, k := range keys {
				doubt[k] = true
			}
		}
	}
	for k := range p.pending {
		if !doubt[k] {
			delete(p.pending, k)
		}
	}
	p.rescan = p.rescan && rescanDoubt
	p.forgetSizes()
}

// pendingFor returns the pending incarnations d belongs to: its own, and
// its name's legacy (id-less) delete.
func (p *Purger) pendingFor(d ports.TopicDir) []incarnation {
	var out []incarnation
	for _, k := range []incarnation{{d.Topic, d.ID}, {topic: d.Topic}} {
		if p.pending[k] {
			out = append(out, k)
		}
		if d.ID == "" {
			break // one key: both are the same
		}
	}
	return out
}

// judge purges d when it is dead locally and the leader confirms its
// incarnation is gone: the incarnation's open logs are closed first (so
// consumers waiting on them wake), then the directory is reclaimed only if
// it is still what the listing saw.
func (p *Purger) judge(ctx context.Context, d ports.TopicDir) verdict {
	if isLive, err := liveDir(p.store, d); err != nil || isLive {
		if err != nil {
			p.log.Warn("purge keeps a directory: reading the replica failed", slog.String("dir", d.Dir), slog.Any("error", err))
			return doubtful
		}
		return live
	}
	dec := p.confirm.TopicGone(ctx, d.Topic, d.ID)
	if !dec.Destroy {
		p.log.Info("purge keeps a deleted topic's directory", slog.String("dir", d.Dir),
			slog.String("reason", dec.Reason), slog.Any("error", dec.Err))
		if dec.Err != nil {
			return unconfirmed
		}
		return live
	}
	if err := p.closeLogs(d); err != nil {
		p.log.Warn("purge keeps a directory: closing its logs failed", slog.String("dir", d.Dir), slog.Any("error", err))
		return doubtful
	}
	if err := p.dirs.ReclaimTopicDir(d); err != nil {
		level := slog.LevelWarn
		if errors.Is(err, domain.ErrConflict) {
			level = slog.LevelInfo // reopened, restamped or quarantined meanwhile: judged again
		}
		p.log.Log(ctx, level, "purge keeps a directory for now", slog.String("dir", d.Dir), slog.Any("error", err))
		return doubtful
	}
	p.log.Info("purged a deleted topic incarnation's directory", slog.String("dir", d.Dir),
		slog.String("topic", d.Topic), slog.String("id", string(d.ID)), slog.String("reason", dec.Reason))
	return purged
}

// closeLogs removes d's partitions through the partition logs, which closes
// any open log of them first. Only a topic directory stamped with a known
// incarnation is touched this way: the store leaves the partitions alone if
// the marker changed meanwhile. A quarantine has no open logs.
func (p *Purger) closeLogs(d ports.TopicDir) error {
	if d.Quarantine || d.ID == "" {
		return nil
	}
	var errs []error
	for part := range p.sizes[incarnation{d.Topic, d.ID}] {
		ref := domain.PartitionRef{Topic: d.Topic, TopicID: d.ID, Partition: part}
		if err := p.logs.Remove(ref); err != nil {
			errs = append(errs, fmt.Errorf("orphans: purge %s: %w", ref, err))
		}
	}
	return errors.Join(errs...)
}

// forgetSizes drops the partition counts of incarnations neither live nor
// pending.
func (p *Purger) forgetSizes() {
	for inc := range p.sizes {
		if id, ok := p.names[inc.topic]; ok && id == inc.id {
			continue
		}
		if !p.pending[inc] && !p.pending[incarnation{topic: inc.topic}] {
			delete(p.sizes, inc)
		}
	}
}

// liveDir reports whether d belongs to the topic the replica holds: the
// same incarnation, or a marker-less directory of a topic it holds.
func liveDir(store ports.MetadataTopics, d ports.TopicDir) (bool, error) {
	if d.Quarantine {
		return false, nil
	}
	t, ok, err := store.Topic(d.Topic)
	if err != nil {
		return false, fmt.Errorf("orphans: read topic %q: %w", d.Topic, err)
	}
	return ok && (d.ID == "" || string(d.ID) == t.ID), nil
}
