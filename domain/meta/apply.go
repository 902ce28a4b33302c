package meta

import (
	"encoding/json"
	"fmt"
)

// Outcome is what applying one entry decided: the result, and the writes to
// make when it is OK (none for a refusal).
type Outcome struct {
	Result    Result
	Mutations []Mutation
}

// Apply decides one entry against the views in r. It is deterministic: the
// same views and envelope give the same outcome on every replica. The
// returned error is only a read failure of r (or a corrupt view): the caller
// must stop, not skip the entry.
func Apply(r KVReader, env Envelope) (Outcome, error) {
	if env.Event == nil {
		return Outcome{Result: refuse(CodeInvalid, "no event")}, nil
	}
	if err := env.Event.Validate(); err != nil {
		return Outcome{Result: refuse(CodeInvalid, "%v", err)}, nil
	}
	t := newTx(r)
	res, err := env.Event.apply(t, env)
	if err != nil {
		return Outcome{}, fmt.Errorf("apply %s %s: %w", env.Event.Type(), env.Event.Subject(), err)
	}
	if !res.OK() {
		return Outcome{Result: res}, nil
	}
	return Outcome{Result: res, Mutations: t.mutations()}, nil
}

// put stores v as JSON under key. The view types hold only strings, numbers,
// bools, slices and byte slices, which always marshal.
func (t *tx) put(key []byte, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("meta: view %T does not marshal: %v", v, err))
	}
	t.set(key, b)
}

func (t *tx) topic(name string) (Topic, bool, error) { return ReadTopic(t, name) }

func (t *tx) putTopic(tp Topic) { t.put(topicKey(tp.Name), tp) }

// Step applies env as the entry at index and returns its result with every
// write it makes: the views' (when OK) followed by the history's. Every
// implementation of the state machine applies entries through Step.
//
// An applied member heartbeat is not written to the history: every node
// sends one each 5 s, which would push every change an operator wants to
// read (who changed what, when) out of the bounded history within hours.
// Nor is a running redrive job's progress (one each 5 s while it moves
// letters); its start, cancel and end are. A refused one is, like every
// other refusal.
func Step(r KVReader, index uint64, env Envelope, journalKeep int) (Result, []Mutation, error) {
	out, err := Apply(r, env)
	if err != nil {
		return Result{}, nil, err
	}
	if out.Result.OK() && unrecorded(env.Event) {
		return out.Result, out.Mutations, nil
	}
	journal, err := RecordJournal(r, index, env, out.Result, journalKeep)
	if err != nil {
		return Result{}, nil, err
	}
	return out.Result, append(out.Mutations, journal...), nil
}

// unrecorded reports whether an applied ev stays out of the history: a
// member heartbeat, or the progress of a running redrive job.
func unrecorded(ev Event) bool {
	switch e := ev.(type) {
	case *MemberHeartbeat:
		return true
	case *SetTopicRedrive:
		return e.Job != "" && e.Redrive.Running()
	}
	return false
}
