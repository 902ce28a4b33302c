package meta

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// RecordJournal returns the mutations that append one history entry for the
// entry applied at index with result res, dropping the entry that falls out
// of the newest keep. Refused entries are recorded too: they were applied.
func RecordJournal(r KVReader, index uint64, env Envelope, res Result, keep int) ([]Mutation, error) {
	seq, err := journalNext(r)
	if err != nil {
		return nil, err
	}
	entry := JournalEntry{Seq: seq, Index: index, AtMs: env.AtMs, Actor: env.Actor, Code: res.Code, Detail: res.Detail}
	if env.Event != nil {
		entry.Type, entry.Subject = env.Event.Type(), env.Event.Subject()
	}
	b, err := json.Marshal(entry)
	if err != nil {
		return nil, fmt.Errorf("journal entry %d: %w", seq, err)
	}
	ms := []Mutation{
		{Key: journalKey(seq), Value: b},
		{Key: []byte(keyJournalNext), Value: []byte(strconv.FormatUint(seq+1, 10))},
	}
	if keep > 0 && seq >= uint64(keep) {
		ms = append(ms, Mutation{Key: journalKey(seq - uint64(keep)), Delete: true})
	}
	return ms, nil
}

func journalNext(r KVReader) (uint64, error) {
	b, ok, err := r.Get([]byte(keyJournalNext))
	if err != nil || !ok {
		return 0, err
	}
	n, err := strconv.ParseUint(string(b), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("journal next %q: %w", b, ErrCorruptView)
	}
	return n, nil
}

// Journal returns up to limit history entries with Seq < before, newest
// first; before 0 means from the newest. limit must be positive.
func Journal(r KVReader, before uint64, limit int) ([]JournalEntry, error) {
	next, err := journalNext(r)
	if err != nil {
		return nil, err
	}
	hi := next
	if before != 0 && before < hi {
		hi = before
	}
	lo := uint64(0)
	if limit > 0 && hi > uint64(limit) {
		lo = hi - uint64(limit)
	}
	var asc []JournalEntry
	err = r.Scan(journalKey(lo), journalKey(hi), func(k, v []byte) (bool, error) {
		var e JournalEntry
		if err := json.Unmarshal(v, &e); err != nil {
			return false, fmt.Errorf("read %q: %v: %w", k, err, ErrCorruptView)
		}
		asc = append(asc, e)
		return true, nil
	})
	out := make([]JournalEntry, 0, len(asc))
	for i := len(asc) - 1; i >= 0; i-- {
		out = append(out, asc[i])
	}
	return out, err
}
