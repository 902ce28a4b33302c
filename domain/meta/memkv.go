package meta

import (
	"bytes"
	"sort"
)

// MemKV is an in-memory ordered KV for the fake store and tests. Not safe for
// concurrent use; callers lock around it.
type MemKV struct {
	keys   []string // sorted
	values map[string][]byte
}

// NewMemKV returns an empty MemKV.
func NewMemKV() *MemKV { return &MemKV{values: make(map[string][]byte)} }

// Get returns a copy of the value under key.
func (m *MemKV) Get(key []byte) ([]byte, bool, error) {
	v, ok := m.values[string(key)]
	if !ok {
		return nil, false, nil
	}
	return bytes.Clone(v), true, nil
}

// Set stores a copy of value under key.
func (m *MemKV) Set(key, value []byte) error {
	k := string(key)
	if _, ok := m.values[k]; !ok {
		i := sort.SearchStrings(m.keys, k)
		m.keys = append(m.keys, "")
		copy(m.keys[i+1:], m.keys[i:])
		m.keys[i] = k
	}
	m.values[k] = bytes.Clone(value)
	return nil
}

// Delete removes key; deleting an absent key is a no-op.
func (m *MemKV) Delete(key []byte) error {
	k := string(key)
	if _, ok := m.values[k]; !ok {
		return nil
	}
	delete(m.values, k)
	i := sort.SearchStrings(m.keys, k)
	m.keys = append(m.keys[:i], m.keys[i+1:]...)
	return nil
}

// Scan visits keys in [lower, upper) in order; a nil upper means no bound.
func (m *MemKV) Scan(lower, upper []byte, fn func(key, value []byte) (bool, error)) error {
	for i := sort.SearchStrings(m.keys, string(lower)); i < len(m.keys); i++ {
		k := m.keys[i]
		if upper != nil && k >= string(upper) {
			return nil
		}
		more, err := fn([]byte(k), m.values[k])
		if err != nil || !more {
			return err
		}
	}
	return nil
}

// Len is the number of keys held.
func (m *MemKV) Len() int { return len(m.keys) }
