package redrive

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/access"
	"github.com/narad/narad/domain/deadletter"
)

// letter is a leased dead letter on its way to its target.
type letter struct {
	at     pos
	handle domain.ReceiptHandle
	msg    Message
}

// batch redrives one leased batch: read each letter, produce them grouped
// by target, ack what was produced. fresh is false when the batch held only
// messages this worker had already left alone; fatal is set when the job
// must end as failed (its one target refused a produce for good).
func (w *worker) batch(ctx context.Context, ds []domain.Delivery) (fresh bool, fatal string) {
	groups := map[string][]letter{}
	var order []string
	var acks []letter
	for _, d := range ds {
		at := pos{d.Partition, d.Record.Offset}
		switch {
		case d.Handle == nil || w.skipped[at]:
			continue
		case w.unacked[at]:
			acks, fresh = append(acks, letter{at: at, handle: *d.Handle}), true
			continue
		}
		fresh = true
		l, target, err := deadletter.Target(d.Record.Payload, w.dlt, w.job.To)
		if err == nil && w.refused[target] != nil {
			err = w.refused[target]
		}
		if err != nil {
			w.skip([]pos{at}, fmt.Sprintf("p%d @%d: %v", at.partition, at.offset, err))
			continue
		}
		if _, ok := groups[target]; !ok {
			order = append(order, target)
		}
		groups[target] = append(groups[target], letter{at: at, handle: *d.Handle, msg: Message{Key: l.Key, Payload: l.Payload}})
	}
	for _, target := range order {
		items := groups[target]
		done, err := w.produce(ctx, target, items)
		acks = append(acks, items[:done]...)
		w.moved(done)
		if err == nil {
			continue
		}
		if retryable(err) || ctx.Err() != nil {
			w.transient(ctx, "produce to "+target, err) // the rest comes back when its lease lapses
			break
		}
		msg := fmt.Sprintf("produce to %s: %v", target, err)
		if w.job.To != "" {
			fatal = msg
			break
		}
		w.refused[target] = errors.New(msg)
		left := make([]pos, 0, len(items)-done)
		for _, it := range items[done:] {
			left = append(left, it.at)
		}
		w.skip(left, msg)
	}
	w.ack(ctx, acks)
	return fresh, fatal
}

// skip leaves the letters at ats alone for the rest of this worker's life
// (they stay in the dead-letter topic), counting them and keeping why as
// the job's last error.
func (w *worker) skip(ats []pos, why string) {
	for _, at := range ats {
		w.skipped[at] = true
	}
	w.job.Skipped += uint64(len(ats))
	w.job.Error = deadletter.TrimError(why)
	w.r.d.Log.Warn("redrive: letters left in the dead-letter topic", slog.String("topic", w.dlt),
		slog.Int("letters", len(ats)), slog.String("why", why))
}

// moved counts n letters produced to their target.
func (w *worker) moved(n int) {
	if n == 0 {
		return
	}
	w.job.Moved += uint64(n)
	w.pace.Take(n)
	w.r.d.Metrics.RedriveMoved(w.dlt, n)
}

// produce sends items to target in produces of at most produceChunkBytes,
// after checking that the job's starter may produce there, and answers how
// many leading items are durable.
func (w *worker) produce(ctx context.Context, target string, items []letter) (int, error) {
	if err := w.allowed(target); err != nil {
		return 0, err
	}
	done := 0
	for done < len(items) {
		var chunk []Message
		size := 0
		for _, it := range items[done:] {
			n := len(it.msg.Key) + len(it.msg.Payload)
			if len(chunk) > 0 && size+n > produceChunkBytes {
				break
			}
			chunk, size = append(chunk, it.msg), size+n
		}
		if err := w.r.d.Sink.Produce(ctx, target, chunk); err != nil {
			return done, err
		}
		done += len(chunk)
	}
	return done, nil
}

// allowed asks whether the job's starter holds produce on target now; a
// job started with security off (no starter) may produce anywhere.
func (w *worker) allowed(target string) error {
	if w.job.By == "" {
		return nil
	}
	u, ok, err := w.r.d.Store.User(w.job.By)
	switch {
	case err != nil:
		return fmt.Errorf("%w: read user %q: %w", domain.ErrUnavailable, w.job.By, err)
	case !ok:
		return domain.Refuse(domain.ErrForbidden, fmt.Sprintf("user %q who started the redrive no longer exists", w.job.By))
	}
	return access.Decide(access.FromUser(u), access.Request{Op: access.OpProduce, Topic: access.Topic{Name: target}})
}

// ack settles the produced letters. A refused handle (its lease lapsed) is
// remembered: when it comes back it is acked without a second produce.
func (w *worker) ack(ctx context.Context, items []letter) {
	if len(items) == 0 {
		return
	}
	hs := make([]domain.ReceiptHandle, len(items))
	for i, it := range items {
		hs[i] = it.handle
	}
	out, err := w.r.d.Source.Ack(ctx, w.dlt, hs)
	for i, it := range items {
		if err == nil && i < len(out) && out[i] == nil {
			delete(w.unacked, it.at)
			continue
		}
		w.unacked[it.at] = true
	}
	if err != nil {
		w.transient(ctx, "ack", err)
	}
}

// retryable reports whether err is worth retrying: the cluster or a node
// cannot serve now, rather than the request being refused.
func retryable(err error) bool {
	for _, e := range []error{domain.ErrUnavailable, domain.ErrOwnerDown, domain.ErrOwnerNoAnswer, domain.ErrOwnerNotReached,
		domain.ErrLogClosed, domain.ErrClosed, domain.ErrTooManyConsumes, domain.ErrWALFailed, domain.ErrDraining,
		domain.ErrRateLimited, domain.ErrNotOwner, context.DeadlineExceeded, context.Canceled} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
