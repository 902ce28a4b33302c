package metastore

import (
	"bytes"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"go.uber.org/zap"
)

// diskRetry commits an Update batch, retrying while the disk refuses the
// write (internals §8.3 fail-stop (b)): 100 ms, doubling to 5 s, for up to
// 30 s, logging the failure once. Past that the caller halts the replica;
// the entries are not counted applied, so a restart replays them.
//
// Pebble treats a failure inside its commit pipeline (a WAL write or sync
// that fails) as fatal and calls its logger's Fatalf, which halts the
// process at once; the retry covers the failures Commit returns. Timing is
// not apply content: reading the clock here keeps apply deterministic.
type diskRetry struct {
	first, ceiling, budget time.Duration
	// try commits one batch synced (a test injects failures here).
	try   func(*pebble.Batch) error
	now   func() time.Time
	sleep func(time.Duration)
}

func newDiskRetry() diskRetry {
	return diskRetry{
		first: diskRetryFirst, ceiling: diskRetryMax, budget: diskRetryBudget,
		try: func(b *pebble.Batch) error { return b.Commit(pebble.Sync) },
		now: time.Now, sleep: time.Sleep,
	}
}

// commit commits batch on db. After a failure it re-commits a copy of the
// batch's contents (pebble never takes a batch twice) until one succeeds or
// the budget is spent, then returns the last error.
func (d diskRetry) commit(db *pebble.DB, batch *pebble.Batch, log *zap.Logger) error {
	err := d.try(batch)
	if err == nil {
		return nil
	}
	log.Error("metadata disk refused a write; retrying before stopping",
		zap.Duration("retry_for", d.budget), zap.Error(err))
	repr := bytes.Clone(batch.Repr())
	start := d.now()
	for wait := d.first; ; wait = min(2*wait, d.ceiling) {
		left := d.budget - d.now().Sub(start)
		if left <= 0 {
			return fmt.Errorf("metastore: disk refused the write for %v: %w", d.budget, err)
		}
		d.sleep(min(wait, left))
		if err = d.retry(db, repr); err == nil {
			log.Info("metadata disk write succeeded after retrying", zap.Duration("after", d.now().Sub(start)))
			return nil
		}
	}
}

func (d diskRetry) retry(db *pebble.DB, repr []byte) error {
	b := db.NewBatch()
	defer b.Close()
	if err := b.SetRepr(bytes.Clone(repr)); err != nil {
		return fmt.Errorf("metastore: copy the refused batch: %w", err)
	}
	return d.try(b)
}
