package meta

func (t *tx) member(id string) (Member, bool, error) { return ReadMember(t, id) }

func (t *tx) tombstoned(id string) (bool, error) {
	_, found, err := t.get(tombKey(id))
	return found, err
}

func (e *MemberJoin) apply(t *tx, env Envelope) (Result, error) {
	if gone, err := t.tombstoned(e.ID); err != nil || gone {
		return refuse(CodeRefused, "member %q was decommissioned", e.ID), err
	}
	m, _, err := t.member(e.ID)
	if err != nil {
		return Result{}, err
	}
	m.ID, m.Addr, m.ClusterAddr, m.Build, m.EntryTypes = e.ID, e.Addr, e.ClusterAddr, e.Build, e.EntryTypes
	m.Status, m.LastHeartbeat = StatusAlive, env.AtSeconds()
	t.put(memberKey(e.ID), m)
	return okResult(), nil
}

func (e *MemberHeartbeat) apply(t *tx, env Envelope) (Result, error) {
	if gone, err := t.tombstoned(e.ID); err != nil || gone {
		return refuse(CodeRefused, "member %q was decommissioned", e.ID), err
	}
	return t.updateMember(e.ID, func(m *Member) Result {
		m.LastHeartbeat, m.Build, m.EntryTypes = env.AtSeconds(), e.Build, e.EntryTypes
		return okResult()
	})
}

func (e *MemberDead) apply(t *tx, _ Envelope) (Result, error) {
	return t.updateMember(e.ID, func(m *Member) Result {
		m.Status = StatusDead
		return okResult()
	})
}

func (e *MarkMemberDeadIf) apply(t *tx, _ Envelope) (Result, error) {
	return t.updateMember(e.ID, func(m *Member) Result {
		if m.LastHeartbeat > e.Heartbeat {
			return refuse(CodeConflict, "member %q heartbeat %d is newer than the %d judged", e.ID, m.LastHeartbeat, e.Heartbeat)
		}
		m.Status = StatusDead
		return okResult()
	})
}

func (e *SetMemberDraining) apply(t *tx, _ Envelope) (Result, error) {
	return t.updateMember(e.ID, func(m *Member) Result {
		m.Draining = e.Draining
		return okResult()
	})
}

// updateMember applies change to an existing member record.
func (t *tx) updateMember(id string, change func(*Member) Result) (Result, error) {
	m, found, err := t.member(id)
	if err != nil || !found {
		return refuse(CodeNotFound, "member %q not found", id), err
	}
	if res := change(&m); !res.OK() {
		return res, nil
	}
	t.put(memberKey(id), m)
	return okResult(), nil
}

func (e *RemoveMember) apply(t *tx, env Envelope) (Result, error) {
	_, found, err := t.member(e.ID)
	if err != nil {
		return Result{}, err
	}
	gone, err := t.tombstoned(e.ID)
	if err != nil || (!found && !gone) {
		return refuse(CodeNotFound, "member %q not found", e.ID), err
	}
	t.del(memberKey(e.ID))
	if !gone {
		t.put(tombKey(e.ID), Tombstone{ID: e.ID, At: env.AtSeconds()})
	}
	return okResult(), nil
}

func (e *ReadmitMember) apply(t *tx, _ Envelope) (Result, error) {
	if gone, err := t.tombstoned(e.ID); err != nil || !gone {
		return refuse(CodeNotFound, "member %q has no tombstone", e.ID), err
	}
	t.del(tombKey(e.ID))
	return okResult(), nil
}

func (e *AssignPartition) apply(t *tx, _ Envelope) (Result, error) {
	row := Assignment{Topic: e.Topic, Partition: e.Partition, Owner: e.Owner}
	tp, found, err := t.topic(e.Topic)
	if err != nil {
		return Result{}, err
	}
	if found {
		row.TopicID = tp.ID
	}
	t.put(assignKey(e.Topic, e.Partition), row)
	return okResult(), nil
}

func (e *AssignPartitionIfAbsent) apply(t *tx, _ Envelope) (Result, error) {
	tp, found, err := t.topic(e.Topic)
	if err != nil || !found {
		return refuse(CodeNotFound, "topic %q not found", e.Topic), err
	}
	switch {
	case tp.ID != e.TopicID:
		return refuse(CodeConflict, "topic %q is incarnation %q, not %q", e.Topic, tp.ID, e.TopicID), nil
	case e.Partition >= tp.Partitions:
		return refuse(CodeRefused, "partition %d out of range for %d partitions", e.Partition, tp.Partitions), nil
	}
	if gone, err := t.tombstoned(e.Owner); err != nil || gone {
		return refuse(CodeRefused, "member %q was decommissioned", e.Owner), err
	}
	if row, found, err := ReadAssignment(t, e.Topic, e.Partition); err != nil || found {
		return refuse(CodeExists, "%s is owned by %q", e.Subject(), row.Owner), err
	}
	t.put(assignKey(e.Topic, e.Partition), Assignment{Topic: e.Topic, TopicID: e.TopicID, Partition: e.Partition, Owner: e.Owner})
	return okResult(), nil
}

func (e *PruneAssignment) apply(t *tx, _ Envelope) (Result, error) {
	row, found, err := ReadAssignment(t, e.Topic, e.Partition)
	if err != nil || !found {
		return refuse(CodeNotFound, "%s has no row", e.Subject()), err
	}
	tp, live, err := t.topic(e.Topic)
	if err != nil {
		return Result{}, err
	}
	if live && e.Partition < tp.Partitions && row.BelongsTo(tp.ID) {
		return refuse(CodeRefused, "%s is a live row", e.Subject()), nil
	}
	t.del(assignKey(e.Topic, e.Partition))
	return okResult(), nil
}

// updateRow applies change to an existing assignment row of incarnation id
// (any incarnation when id is empty).
func (t *tx) updateRow(topic, id string, p int32, change func(*Assignment) Result) (Result, error) {
	row, found, err := ReadAssignment(t, topic, p)
	if err != nil || !found {
		return refuse(CodeNotFound, "%s has no row", partSubject(topic, p)), err
	}
	if id != "" && row.TopicID != id {
		return refuse(CodeConflict, "%s belongs to incarnation %q, not %q", partSubject(topic, p), row.TopicID, id), nil
	}
	if res := change(&row); !res.OK() {
		return res, nil
	}
	t.put(assignKey(topic, p), row)
	return okResult(), nil
}

func (e *SetAssignmentTarget) apply(t *tx, _ Envelope) (Result, error) {
	return t.updateRow(e.Topic, e.TopicID, e.Partition, func(a *Assignment) Result {
		if e.Target != "" && e.Target == a.Owner {
			return refuse(CodeRefused, "%s is already owned by %q", e.Subject(), a.Owner)
		}
		a.Target = e.Target
		return okResult()
	})
}

func (e *CompleteMove) apply(t *tx, _ Envelope) (Result, error) {
	return t.updateRow(e.Topic, e.TopicID, e.Partition, func(a *Assignment) Result {
		if a.Owner != e.ExpectedOwner || a.Target != e.Target {
			return refuse(CodeConflict, "%s is %q -> %q, not %q -> %q", e.Subject(), a.Owner, a.Target, e.ExpectedOwner, e.Target)
		}
		a.Owner, a.Target = e.Target, ""
		return okResult()
	})
}

func (e *AbortMove) apply(t *tx, _ Envelope) (Result, error) {
	return t.updateRow(e.Topic, e.TopicID, e.Partition, func(a *Assignment) Result {
		if a.Target != e.ExpectedTarget {
			return refuse(CodeConflict, "%s targets %q, not %q", e.Subject(), a.Target, e.ExpectedTarget)
		}
		a.Target = ""
		return okResult()
	})
}
