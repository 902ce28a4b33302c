package meta

import (
	"bytes"
	"sort"
)

// KVReader is the ordered key-value view apply and the read functions work
// on. The pebble state machine and MemKV implement it.
type KVReader interface {
	// Get returns a copy of the value under key, or ok=false.
	Get(key []byte) (value []byte, ok bool, err error)
	// Scan calls fn for every key in [lower, upper) in ascending order until
	// fn returns false or an error. key and value are valid only during fn.
	Scan(lower, upper []byte, fn func(key, value []byte) (bool, error)) error
}

// KVWriter receives mutations.
type KVWriter interface {
	Set(key, value []byte) error
	Delete(key []byte) error
}

// Mutation is one write decided by apply: set Key to Value, or delete it.
type Mutation struct {
	Key    []byte
	Value  []byte
	Delete bool
}

// WriteMutations writes ms to w in order.
func WriteMutations(w KVWriter, ms []Mutation) error {
	for _, m := range ms {
		var err error
		if m.Delete {
			err = w.Delete(m.Key)
		} else {
			err = w.Set(m.Key, m.Value)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// prefixEnd returns the smallest key greater than every key with prefix p.
func prefixEnd(p []byte) []byte {
	end := bytes.Clone(p)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

// tx overlays one entry's pending writes on the views, so rules read their
// own writes and a refusal leaves nothing behind.
type tx struct {
	base   KVReader
	writes map[string]Mutation
}

func newTx(base KVReader) *tx {
	return &tx{base: base, writes: make(map[string]Mutation)}
}

func (t *tx) get(key []byte) ([]byte, bool, error) {
	if m, ok := t.writes[string(key)]; ok {
		return m.Value, !m.Delete, nil
	}
	return t.base.Get(key)
}

func (t *tx) set(key, value []byte) {
	t.writes[string(key)] = Mutation{Key: bytes.Clone(key), Value: value}
}

func (t *tx) del(key []byte) {
	t.writes[string(key)] = Mutation{Key: bytes.Clone(key), Delete: true}
}

// scan merges the base with pending writes in [lower, upper).
func (t *tx) scan(lower, upper []byte, fn func(key, value []byte) (bool, error)) error {
	pending := t.pendingIn(lower, upper)
	if len(pending) == 0 {
		return t.base.Scan(lower, upper, fn)
	}
	type kv struct{ k, v []byte }
	var merged []kv
	err := t.base.Scan(lower, upper, func(k, v []byte) (bool, error) {
		if _, shadowed := t.writes[string(k)]; !shadowed {
			merged = append(merged, kv{bytes.Clone(k), bytes.Clone(v)})
		}
		return true, nil
	})
	if err != nil {
		return err
	}
	for _, m := range pending {
		if !m.Delete {
			merged = append(merged, kv{m.Key, m.Value})
		}
	}
	sort.Slice(merged, func(i, j int) bool { return bytes.Compare(merged[i].k, merged[j].k) < 0 })
	for _, e := range merged {
		more, err := fn(e.k, e.v)
		if err != nil || !more {
			return err
		}
	}
	return nil
}

func (t *tx) pendingIn(lower, upper []byte) []Mutation {
	var out []Mutation
	for _, m := range t.writes {
		if bytes.Compare(m.Key, lower) >= 0 && (upper == nil || bytes.Compare(m.Key, upper) < 0) {
			out = append(out, m)
		}
	}
	return out
}

// mutations returns the pending writes sorted by key (a deterministic order).
func (t *tx) mutations() []Mutation {
	out := make([]Mutation, 0, len(t.writes))
	for _, m := range t.writes {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return bytes.Compare(out[i].Key, out[j].Key) < 0 })
	return out
}

// Get and Scan let a tx serve as a KVReader for the read functions.
func (t *tx) Get(key []byte) ([]byte, bool, error) { return t.get(key) }

func (t *tx) Scan(lower, upper []byte, fn func(key, value []byte) (bool, error)) error {
	return t.scan(lower, upper, fn)
}
