package meta

// The topic-policy entries (SetTopicRedelivery, SetTopicDeadLetter,
// SetTopicRedrive) share their address: a topic name and, when set, the
// incarnation id the entry is meant for.

// validPolicyRef checks a policy entry's topic name and, when set, its
// incarnation id.
func validPolicyRef(name, id string) error {
	if err := validTopicRef(name); err != nil {
		return err
	}
	if id == "" {
		return nil
	}
	return validTopicID(id)
}

// policyTopic reads the topic a policy entry (named what) sets: ok only
// when it exists, is incarnation id (any when id is empty) and is not a
// remote child's stub; otherwise the refusal to answer (and a read error).
func policyTopic(t *tx, name, id, what string) (tp Topic, refusal Result, ok bool, err error) {
	tp, found, err := t.topic(name)
	switch {
	case err != nil || !found:
		return Topic{}, refuse(CodeNotFound, "topic %q not found", name), false, err
	case id != "" && tp.ID != id:
		return Topic{}, refuse(CodeConflict, "topic %q is incarnation %q, not %q", name, tp.ID, id), false, nil
	case tp.IsRemoteStub():
		return Topic{}, refuse(CodeRefused, "topic %q is a remote child's stub and takes no %s", name, what), false, nil
	}
	return tp, Result{}, true, nil
}
