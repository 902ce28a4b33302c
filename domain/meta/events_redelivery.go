package meta

// Redelivery limits (our extension; docs/api-extensions.md "Redelivery
// backoff"). A wait is at most the longest delay a nack may carry.
const (
	RedeliveryWaitMaxMs       int64   = 12 * 60 * 60 * 1000
	RedeliveryMultiplierMax   float64 = 10
	RedeliveryMultiplierUnset float64 = 2 // what a policy without a multiplier gets
	// RedeliveryMaxUnsetMs is the cap a policy without max_ms gets (10
	// minutes), or its initial wait when that is longer.
	RedeliveryMaxUnsetMs int64 = 10 * 60 * 1000
)

// SetTopicRedelivery (type 38) sets or, with a nil Redelivery, clears the
// redelivery backoff of topic incarnation ID (of the topic whatever its
// incarnation when ID is empty: a topic older than incarnation ids). It
// changes nothing else.
type SetTopicRedelivery struct {
	Name       string      `json:"name"`
	ID         string      `json:"id"`
	Redelivery *Redelivery `json:"redelivery,omitempty"`
}

func (*SetTopicRedelivery) Type() EntryType   { return TypeSetTopicRedelivery }
func (e *SetTopicRedelivery) Subject() string { return "topic " + e.Name }

// Validate checks the name, the id and the policy's ranges.
func (e *SetTopicRedelivery) Validate() error {
	if err := validPolicyRef(e.Name, e.ID); err != nil {
		return err
	}
	if e.Redelivery == nil {
		return nil
	}
	return e.Redelivery.Validate()
}

// Validate checks a policy's ranges: initial_ms 1..12 h, max_ms
// initial_ms..12 h, multiplier 1..10, jitter 0..1.
func (r Redelivery) Validate() error {
	switch {
	case r.InitialMs < 1 || r.InitialMs > RedeliveryWaitMaxMs:
		return invalid("redelivery initial_ms %d outside 1..%d", r.InitialMs, RedeliveryWaitMaxMs)
	case r.MaxMs < r.InitialMs || r.MaxMs > RedeliveryWaitMaxMs:
		return invalid("redelivery max_ms %d outside initial_ms (%d)..%d", r.MaxMs, r.InitialMs, RedeliveryWaitMaxMs)
	case !(r.Multiplier >= 1 && r.Multiplier <= RedeliveryMultiplierMax):
		return invalid("redelivery multiplier %v outside 1..%v", r.Multiplier, RedeliveryMultiplierMax)
	case !(r.Jitter >= 0 && r.Jitter <= 1):
		return invalid("redelivery jitter %v outside 0..1", r.Jitter)
	}
	return nil
}

func (e *SetTopicRedelivery) apply(t *tx, _ Envelope) (Result, error) {
	tp, refusal, ok, err := policyTopic(t, e.Name, e.ID, "redelivery policy")
	if !ok {
		return refusal, err
	}
	tp.Redelivery = e.Redelivery
	t.putTopic(tp)
	return okResult(), nil
}
