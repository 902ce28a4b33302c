package meta

import (
	"github.com/narad/narad/domain/deadletter"
)

// SetTopicDeadLetter (type 39) sets or, with a nil DeadLetter, clears the
// dead-letter policy of topic incarnation ID (of the topic whatever its
// incarnation when ID is empty: a topic older than incarnation ids). It
// changes nothing else, and does not look the dead-letter topic up: the
// proposer checks that it exists, and it may be deleted afterwards.
type SetTopicDeadLetter struct {
	Name       string      `json:"name"`
	ID         string      `json:"id"`
	DeadLetter *DeadLetter `json:"dead_letter,omitempty"`
}

func (*SetTopicDeadLetter) Type() EntryType   { return TypeSetTopicDeadLetter }
func (e *SetTopicDeadLetter) Subject() string { return "topic " + e.Name }

// Validate checks the name, the id and the policy's rules.
func (e *SetTopicDeadLetter) Validate() error {
	if err := validPolicyRef(e.Name, e.ID); err != nil {
		return err
	}
	if e.DeadLetter == nil {
		return nil
	}
	return e.DeadLetter.Validate(e.Name)
}

// Validate checks d as the policy of topic origin by the rules of
// deadletter.Policy: a valid topic name other than origin, and a maximum
// receive count from 1 to 1000.
func (d DeadLetter) Validate(origin string) error {
	err := d.Policy().Validate(origin)
	if err == nil {
		return nil
	}
	return invalid("%s", deadletter.Rule(err))
}

// Policy is d as the dead-letter rules take it.
func (d DeadLetter) Policy() deadletter.Policy {
	return deadletter.Policy{Topic: d.Topic, MaxReceiveCount: d.MaxReceiveCount}
}

func (e *SetTopicDeadLetter) apply(t *tx, _ Envelope) (Result, error) {
	tp, refusal, ok, err := policyTopic(t, e.Name, e.ID, "dead-letter policy")
	if !ok {
		return refusal, err
	}
	tp.DeadLetter = e.DeadLetter
	t.putTopic(tp)
	return okResult(), nil
}
