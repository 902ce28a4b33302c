package meta

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
)

func (e *PutSchema) apply(t *tx, _ Envelope) (Result, error) { return t.putSchema(*e, "") }

func (e *PutSchemaIf) apply(t *tx, _ Envelope) (Result, error) { return t.putSchema(e.PutSchema, e.ID) }

func (t *tx) putSchema(p PutSchema, id string) (Result, error) {
	tp, found, err := t.topic(p.Topic)
	if err != nil || !found {
		return refuse(CodeNotFound, "topic %q not found", p.Topic), err
	}
	if id != "" && tp.ID != id {
		return refuse(CodeConflict, "topic %q is incarnation %q, not %q", p.Topic, tp.ID, id), nil
	}
	if tp.Parent != "" {
		return refuse(CodeRefused, "schema of %q is parent-managed while attached to %q", p.Topic, tp.Parent), nil
	}
	return t.addSchemaVersion(p.Topic, p.Version, p.Schema)
}

// addSchemaVersion appends version v to topic's history within the caps and
// copies it to every descendant.
func (t *tx) addSchemaVersion(topic string, v int32, doc []byte) (Result, error) {
	history, err := Schemas(t, topic)
	if err != nil {
		return Result{}, err
	}
	if want := int32(len(history)) + 1; v != want {
		return refuse(CodeConflict, "schema version conflict: %q expects version %d, not %d", topic, want, v), nil
	}
	if len(history) >= SchemaVersionsMaxCount {
		return refuse(CodeRefused, "schema history of %q is full", topic), nil
	}
	if historyBytes(history)+len(doc) > SchemaTopicMaxBytes {
		return refuse(CodeRefused, "schema history of %q would pass %d bytes", topic, SchemaTopicMaxBytes), nil
	}
	copies, err := t.descendants(topic)
	if err != nil {
		return Result{}, err
	}
	copies = append([]string{topic}, copies...)
	if res, err := t.chargeSchemaBytes(int64(len(doc) * len(copies))); err != nil || !res.OK() {
		return res, err
	}
	for _, name := range copies {
		t.put(schemaKey(name, v), SchemaVersion{Topic: name, Version: v, Schema: doc})
	}
	return okResult(), nil
}

func historyBytes(h []SchemaVersion) int {
	n := 0
	for _, s := range h {
		n += len(s.Schema)
	}
	return n
}

// chargeSchemaBytes adds delta to the cluster-wide schema byte count,
// refusing to pass SchemaClusterMaxBytes (a negative delta always passes).
func (t *tx) chargeSchemaBytes(delta int64) (Result, error) {
	total, err := t.counter([]byte(keySchemaBytes))
	if err != nil {
		return Result{}, err
	}
	if delta > 0 && total+delta > SchemaClusterMaxBytes {
		return refuse(CodeRefused, "schemas would pass %d bytes in the cluster", SchemaClusterMaxBytes), nil
	}
	t.set([]byte(keySchemaBytes), []byte(strconv.FormatInt(max(total+delta, 0), 10)))
	return okResult(), nil
}

// counter reads a decimal counter (absent = 0).
func (t *tx) counter(key []byte) (int64, error) {
	b, found, err := t.get(key)
	if err != nil || !found {
		return 0, err
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("counter %q = %q: %w", key, b, ErrCorruptView)
	}
	return n, nil
}

func (t *tx) dropSchemas(topic string) error {
	history, err := Schemas(t, topic)
	if err != nil || len(history) == 0 {
		return err
	}
	for _, s := range history {
		t.del(schemaKey(topic, s.Version))
	}
	_, err = t.chargeSchemaBytes(-int64(historyBytes(history)))
	return err
}

// descendants returns every topic below name in the fan-out tree, parents
// before their children.
func (t *tx) descendants(name string) ([]string, error) {
	var out []string
	queue := []string{name}
	seen := map[string]bool{name: true}
	for len(queue) > 0 {
		tp, found, err := t.topic(queue[0])
		queue = queue[1:]
		if err != nil {
			return nil, err
		}
		if !found {
			continue
		}
		for _, c := range tp.Children {
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
				queue = append(queue, c)
			}
		}
	}
	return out, nil
}

type attachReq struct {
	parent, parentID, child, childID, epoch string
	delayMs                                 int64
	offsets                                 []int64
}

func (e *AttachChild) apply(t *tx, _ Envelope) (Result, error) {
	return t.attach(attachReq{parent: e.Parent, child: e.Child, epoch: e.Epoch, delayMs: e.DelayMs, offsets: e.Offsets})
}

func (e *AttachChildIf) apply(t *tx, _ Envelope) (Result, error) {
	return t.attach(attachReq{parent: e.Parent, parentID: e.ParentID, child: e.Child, childID: e.ChildID,
		epoch: e.Epoch, delayMs: e.DelayMs, offsets: e.Offsets})
}

func (t *tx) attach(r attachReq) (Result, error) {
	parent, child, res, err := t.linkEnds(r.parent, r.parentID, r.child, r.childID)
	if err != nil || !res.OK() {
		return res, err
	}
	if res, err := t.attachAllowed(parent, child, r); err != nil || !res.OK() {
		return res, err
	}
	if res, err := t.reconcileSchemas(parent.Name, child.Name); err != nil || !res.OK() {
		return res, err
	}
	child.Parent, child.AttachEpoch, child.FanoutDelayMs, child.AttachOffsets = parent.Name, r.epoch, r.delayMs, r.offsets
	parent.Children = append(parent.Children, child.Name)
	t.putTopic(child)
	t.putTopic(parent)
	return okResult(), nil
}

// linkEnds reads both ends of a link, checking incarnations when given.
func (t *tx) linkEnds(parentName, parentID, childName, childID string) (Topic, Topic, Result, error) {
	parent, found, err := t.topic(parentName)
	if err != nil || !found {
		return Topic{}, Topic{}, refuse(CodeNotFound, "parent %q not found", parentName), err
	}
	child, found, err := t.topic(childName)
	if err != nil || !found {
		return Topic{}, Topic{}, refuse(CodeNotFound, "child %q not found", childName), err
	}
	if parentID != "" && parent.ID != parentID {
		return parent, child, refuse(CodeConflict, "parent %q is incarnation %q, not %q", parentName, parent.ID, parentID), nil
	}
	if childID != "" && child.ID != childID {
		return parent, child, refuse(CodeConflict, "child %q is incarnation %q, not %q", childName, child.ID, childID), nil
	}
	return parent, child, okResult(), nil
}

func (t *tx) attachAllowed(parent, child Topic, r attachReq) (Result, error) {
	switch {
	case parent.IsRemoteStub():
		return refuse(CodeRefused, "fan-out role conflict: %q is a remote child's stub", parent.Name), nil
	case child.Parent != "":
		return refuse(CodeExists, "child %q is attached to %q", child.Name, child.Parent), nil
	case len(parent.Children) >= ChildrenMaxCount:
		return refuse(CodeRefused, "parent %q has %d children", parent.Name, ChildrenMaxCount), nil
	case int32(len(r.offsets)) > parent.Partitions:
		return refuse(CodeRefused, "%d attach offsets for %d parent partitions", len(r.offsets), parent.Partitions), nil
	case r.delayMs > 0 && parent.RetentionMs != 0 && parent.RetentionMs < r.delayMs+RetentionFloorMs:
		return refuse(CodeRefused, "delay %d ms exceeds what retention %d ms of %q can buffer", r.delayMs, parent.RetentionMs, parent.Name), nil
	}
	below, err := t.descendants(child.Name)
	if err != nil {
		return Result{}, err
	}
	if slices.Contains(below, parent.Name) {
		return refuse(CodeRefused, "attaching %q under %q would make a cycle", child.Name, parent.Name), nil
	}
	return okResult(), nil
}

// reconcileSchemas applies the schema rule of an attach: a child with a
// schema needs a parent with the same history (compared as JSON values); a
// child without one adopts the parent's history, as do its descendants.
func (t *tx) reconcileSchemas(parent, child string) (Result, error) {
	ph, err := Schemas(t, parent)
	if err != nil {
		return Result{}, err
	}
	ch, err := Schemas(t, child)
	if err != nil {
		return Result{}, err
	}
	switch {
	case len(ch) > 0 && len(ph) == 0:
		return refuse(CodeRefused, "child %q has a schema and parent %q has none", child, parent), nil
	case len(ch) > 0 && !sameHistory(ph, ch):
		return refuse(CodeRefused, "schema history of child %q differs from parent %q", child, parent), nil
	case len(ch) > 0 || len(ph) == 0:
		return okResult(), nil
	}
	return t.adoptHistory(child, ph)
}

func (t *tx) adoptHistory(child string, history []SchemaVersion) (Result, error) {
	targets, err := t.descendants(child)
	if err != nil {
		return Result{}, err
	}
	targets = append([]string{child}, targets...)
	if res, err := t.chargeSchemaBytes(int64(historyBytes(history) * len(targets))); err != nil || !res.OK() {
		return res, err
	}
	for _, name := range targets {
		for _, s := range history {
			t.put(schemaKey(name, s.Version), SchemaVersion{Topic: name, Version: s.Version, Schema: s.Schema})
		}
	}
	return okResult(), nil
}

func sameHistory(a, b []SchemaVersion) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !sameJSON(a[i].Schema, b[i].Schema) {
			return false
		}
	}
	return true
}

// sameJSON compares two documents as JSON values (key order and spacing
// ignored, numbers compared by their text).
func sameJSON(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	va, errA := decodeValue(a)
	vb, errB := decodeValue(b)
	return errA == nil && errB == nil && reflect.DeepEqual(va, vb)
}

func decodeValue(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

func (e *DetachChild) apply(t *tx, _ Envelope) (Result, error) {
	return t.detach(e.Parent, "", e.Child, "")
}

func (e *DetachChildIf) apply(t *tx, _ Envelope) (Result, error) {
	return t.detach(e.Parent, e.ParentID, e.Child, e.ChildID)
}

func (t *tx) detach(parentName, parentID, childName, childID string) (Result, error) {
	parent, child, res, err := t.linkEnds(parentName, parentID, childName, childID)
	if err != nil || !res.OK() {
		return res, err
	}
	if child.Parent != parent.Name {
		return refuse(CodeNotFound, "%q is not attached to %q", childName, parentName), nil
	}
	parent.Children = slices.DeleteFunc(parent.Children, func(c string) bool { return c == child.Name })
	t.putTopic(parent)
	if child.IsRemoteStub() { // a stub stands only for its link: detaching ends both
		return okResult(), t.dropStub(child)
	}
	t.putTopic(unlinked(child))
	return okResult(), nil
}
