package wal

// commitOrAwait makes the batch b durable. When no commit is in flight the
// appender takes the commit turn and writes and syncs what is staged
// itself (its own records and any staged beside them): on a quiet node a
// record then costs no hand-off to the sync loop and back, two goroutine
// wake-ups that each woke an idle thread. When a commit is in flight it
// pokes the sync loop, which takes the turn once the commit ends, so
// records staged meanwhile go out together in the next group commit.
func (w *WAL) commitOrAwait(b *batch) error {
	if w.commitMu.TryLock() {
		w.commitStaged()
		w.commitMu.Unlock()
	} else {
		select {
		case w.poke <- struct{}{}:
		default:
		}
	}
	<-b.done
	return b.err
}

// commitTurn waits for the commit turn and commits what is staged; it
// reports whether there was a batch (the sync loop's wake).
func (w *WAL) commitTurn() bool {
	w.commitMu.Lock()
	defer w.commitMu.Unlock()
	return w.commitStaged()
}
