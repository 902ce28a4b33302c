package meta

import "slices"

func (e *CreateTopic) apply(t *tx, env Envelope) (Result, error) {
	return t.createTopic(*e, env.AtSeconds())
}

func (t *tx) createTopic(c CreateTopic, createdAt int64) (Result, error) {
	if _, ok, err := t.topic(c.Name); err != nil || ok {
		return refuse(CodeExists, "topic %q exists", c.Name), err
	}
	other, ok, err := t.get(topicFoldKey(c.Name))
	if err != nil || ok {
		return refuse(CodeExists, "topic %q differs from topic %q only in letter case", c.Name, other), err
	}
	if err := t.dropTopicRows(c.Name); err != nil {
		return Result{}, err
	}
	t.putTopic(Topic{
		Name: c.Name, ID: c.ID, Partitions: c.Partitions, RetentionMs: c.RetentionMs,
		VisibilityTimeoutMs: c.VisibilityTimeoutMs, MaxInFlight: c.MaxInFlight,
		MaxAckedAhead: c.MaxAckedAhead, CreatedAt: createdAt, Owner: c.Owner,
	})
	t.set(topicFoldKey(c.Name), []byte(c.Name))
	return okResult(), nil
}

func (e *CreateTopicWith) apply(t *tx, env Envelope) (Result, error) {
	if res, err := t.createTopic(e.CreateTopic, env.AtSeconds()); err != nil || !res.OK() {
		return res, err
	}
	if e.Schema != nil {
		if res, err := t.addSchemaVersion(e.Name, 1, e.Schema); err != nil || !res.OK() {
			return res, err
		}
	}
	if e.Parent == nil {
		return okResult(), nil
	}
	p := e.Parent
	return t.attach(attachReq{parent: p.Name, parentID: p.ID, child: e.Name, childID: e.ID,
		epoch: p.Epoch, delayMs: p.DelayMs, offsets: p.Offsets})
}

func (e *UpdateTopic) apply(t *tx, _ Envelope) (Result, error) {
	return t.updateTopic(*e, "", CodeRefused)
}

func (e *UpdateTopicIf) apply(t *tx, _ Envelope) (Result, error) {
	return t.updateTopic(e.UpdateTopic, e.ID, CodeConflict)
}

// updateTopic replaces the configuration of topic u.Name. id, when set, must
// be the live incarnation. shrink is the code for a partition count below the
// current one: a rule violation for UpdateTopic, a lost race for the If form.
func (t *tx) updateTopic(u UpdateTopic, id string, shrink Code) (Result, error) {
	tp, found, err := t.topic(u.Name)
	if err != nil || !found {
		return refuse(CodeNotFound, "topic %q not found", u.Name), err
	}
	if id != "" && tp.ID != id {
		return refuse(CodeConflict, "topic %q is incarnation %q, not %q", u.Name, tp.ID, id), nil
	}
	if tp.IsRemoteStub() {
		return refuse(CodeRefused, "topic %q is a remote child's stub and takes no alter", u.Name), nil
	}
	if u.Partitions < tp.Partitions {
		return refuse(shrink, "topic %q has %d partitions; %d would shrink it", u.Name, tp.Partitions, u.Partitions), nil
	}
	if res, err := t.retentionCoversChildren(tp, u.RetentionMs); err != nil || !res.OK() {
		return res, err
	}
	tp.Partitions, tp.RetentionMs = u.Partitions, u.RetentionMs
	tp.MaxInFlight, tp.MaxAckedAhead = u.MaxInFlight, u.MaxAckedAhead
	t.putTopic(tp)
	return okResult(), nil
}

// retentionCoversChildren refuses a parent retention shorter than any delay
// child's delay plus the retention floor (0 keeps forever and covers all),
// and, with a remote child, a retention below 24 h unless it already was.
func (t *tx) retentionCoversChildren(parent Topic, retentionMs int64) (Result, error) {
	if retentionMs == 0 {
		return okResult(), nil
	}
	alreadyShort := parent.RetentionMs != 0 && parent.RetentionMs < RemoteParentRetentionMinMs
	for _, name := range parent.Children {
		child, found, err := t.topic(name)
		if err != nil {
			return Result{}, err
		}
		if !found {
			continue
		}
		if child.FanoutDelayMs > 0 && retentionMs < child.FanoutDelayMs+RetentionFloorMs {
			return refuse(CodeRefused, "delay of child %q exceeds what retention %d ms of %q can buffer", name, retentionMs, parent.Name), nil
		}
		if child.IsRemoteStub() && retentionMs < RemoteParentRetentionMinMs && !alreadyShort {
			return refuse(CodeRefused, "retention %d ms of %q is below the %d ms a parent of remote child %q keeps", retentionMs, parent.Name, RemoteParentRetentionMinMs, name), nil
		}
	}
	return okResult(), nil
}

func (e *DeleteTopic) apply(t *tx, _ Envelope) (Result, error) { return t.deleteTopic(e.Name, "") }

func (e *DeleteTopicIf) apply(t *tx, _ Envelope) (Result, error) { return t.deleteTopic(e.Name, e.ID) }

func (t *tx) deleteTopic(name, id string) (Result, error) {
	tp, found, err := t.topic(name)
	if err != nil || !found {
		return refuse(CodeNotFound, "topic %q not found", name), err
	}
	if id != "" && tp.ID != id {
		return refuse(CodeConflict, "topic %q is incarnation %q, not %q", name, tp.ID, id), nil
	}
	if err := t.dissolveLinks(tp); err != nil {
		return Result{}, err
	}
	if err := t.dropTopicRows(name); err != nil {
		return Result{}, err
	}
	t.del(topicKey(name))
	t.del(topicFoldKey(name))
	return okResult(), nil
}

// dissolveLinks detaches tp from its parent and every local child from tp;
// tp's remote children's stubs go with it (one entry removes them all).
func (t *tx) dissolveLinks(tp Topic) error {
	if tp.Parent != "" {
		parent, found, err := t.topic(tp.Parent)
		if err != nil {
			return err
		}
		if found {
			parent.Children = slices.DeleteFunc(parent.Children, func(c string) bool { return c == tp.Name })
			t.putTopic(parent)
		}
	}
	for _, name := range tp.Children {
		child, found, err := t.topic(name)
		if err != nil {
			return err
		}
		switch {
		case found && child.IsRemoteStub():
			if err := t.dropStub(child); err != nil {
				return err
			}
		case found:
			t.putTopic(unlinked(child))
		}
	}
	return nil
}

// unlinked returns child with its link fields cleared.
func unlinked(child Topic) Topic {
	child.Parent, child.AttachEpoch, child.FanoutDelayMs, child.AttachOffsets = "", "", 0, nil
	return child
}

// dropTopicRows deletes the schemas and assignment rows stored under name.
func (t *tx) dropTopicRows(name string) error {
	if err := t.dropSchemas(name); err != nil {
		return err
	}
	rows, err := Assignments(t, name)
	if err != nil {
		return err
	}
	for _, a := range rows {
		t.del(assignKey(name, a.Partition))
	}
	return nil
}
