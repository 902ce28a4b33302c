package meta

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// View names one family of metadata rows that readers cache or scan. Each
// has a version counter that moves when an applied entry changes one of its
// rows (internals §8: per-domain version counters), so a background pass
// that decodes a whole family can skip itself while the counter stands
// still (internals §6.1: heartbeats and drain flags do not count).
type View uint8

// The views. Part of no on-disk format: counters live in memory only.
const (
	ViewTopics      View = iota // topic/ and topicci/ rows
	ViewAssignments             // assign/ rows (owners and move targets)
	ViewSchemas                 // schema/ rows
	ViewUsers                   // user/ rows
	ViewRemotes                 // remote/ and seals/ rows
	// ViewRouting moves when a member appears or goes, or its id, addr,
	// cluster_addr or status changes: never for a heartbeat's stamp alone.
	ViewRouting
	// ViewPlacement moves with ViewRouting and also when a member's drain
	// flag or a decommission tombstone changes: what placement reads.
	ViewPlacement
	viewCount
)

// Views is a set of views.
type Views uint16

// Has reports whether v is in the set.
func (s Views) Has(v View) bool { return s&(1<<v) != 0 }

// With returns the set with v added.
func (s Views) With(v View) Views { return s | 1<<v }

// AllViews is every view: what a snapshot install changes.
const AllViews Views = 1<<viewCount - 1

// Versions holds one counter per view. The zero value is a replica that has
// applied nothing since it opened; the counters only ever grow.
type Versions [viewCount]uint64

// Bump returns v with every counter in s moved by one.
func (v Versions) Bump(s Views) Versions {
	for i := range v {
		if s.Has(View(i)) {
			v[i]++
		}
	}
	return v
}

// Of returns the counter of view w.
func (v Versions) Of(w View) uint64 { return v[w] }

// Moved reports whether any view in s differs between v and since.
func (v Versions) Moved(since Versions, s Views) bool {
	for i := range v {
		if s.Has(View(i)) && v[i] != since[i] {
			return true
		}
	}
	return false
}

// ViewsChanged classifies the mutations of one applied entry. It must see r
// as it was before muts were written: a member row counts only when its
// routing fields (or, for ViewPlacement, its drain flag) differ from the
// stored row, so a heartbeat that only restamps a live member changes no
// view. Journal and bookkeeping rows change none.
func ViewsChanged(r KVReader, muts []Mutation) (Views, error) {
	var s Views
	for _, m := range muts {
		switch {
		case hasPrefix(m.Key, prefixTopic), hasPrefix(m.Key, prefixTopicFold):
			s = s.With(ViewTopics)
		case hasPrefix(m.Key, prefixAssign):
			s = s.With(ViewAssignments)
		case hasPrefix(m.Key, prefixSchema), bytes.Equal(m.Key, []byte(keySchemaBytes)):
			s = s.With(ViewSchemas)
		case hasPrefix(m.Key, prefixUser):
			s = s.With(ViewUsers)
		case hasPrefix(m.Key, prefixRemote), hasPrefix(m.Key, prefixSeals), bytes.Equal(m.Key, []byte(keyRemoteSalt)):
			s = s.With(ViewRemotes)
		case hasPrefix(m.Key, prefixTomb):
			s = s.With(ViewPlacement)
		case hasPrefix(m.Key, prefixMember):
			got, err := memberChange(r, m)
			if err != nil {
				return 0, err
			}
			s |= got
		}
	}
	return s, nil
}

// memberChange compares a member row's write with the stored row.
func memberChange(r KVReader, m Mutation) (Views, error) {
	old, had, err := getJSON[Member](r, m.Key)
	if err != nil {
		return 0, err
	}
	var cur Member
	has := !m.Delete
	if has {
		if err := json.Unmarshal(m.Value, &cur); err != nil {
			return 0, fmt.Errorf("member write %q: %v: %w", m.Key, err, ErrCorruptView)
		}
	}
	routing := had != has || (has && (old.ID != cur.ID || old.Addr != cur.Addr ||
		old.ClusterAddr != cur.ClusterAddr || old.Status != cur.Status))
	switch {
	case routing:
		return Views(0).With(ViewRouting).With(ViewPlacement), nil
	case has && old.Draining != cur.Draining:
		return Views(0).With(ViewPlacement), nil
	}
	return 0, nil
}

func hasPrefix(key []byte, prefix string) bool {
	return len(key) >= len(prefix) && string(key[:len(prefix)]) == prefix
}
