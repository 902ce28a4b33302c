package deadletter

import (
	"fmt"
	"strings"

	"github.com/narad/narad/domain"
)

// Bounds of a dead-letter policy's maximum receive count.
const (
	MaxReceiveCountMin = 1
	MaxReceiveCountMax = 1000
)

// Policy is a topic's dead-letter policy: after MaxReceiveCount receives, a
// message that is still unsettled goes to Topic instead of to a consumer.
type Policy struct {
	Topic           string
	MaxReceiveCount uint32
}

// Validate checks p as the policy of topic origin: a valid topic name other
// than origin's own, and a count within bounds. Errors wrap
// domain.ErrInvalidArgument and name the field as the API spells it.
func (p Policy) Validate(origin string) error {
	if err := domain.ValidateTopicName(p.Topic); err != nil {
		return fmt.Errorf("%w: dead_letter.topic: %w", domain.ErrInvalidArgument, err)
	}
	if p.Topic == origin {
		return fmt.Errorf("%w: dead_letter.topic must name another topic than %q", domain.ErrInvalidArgument, origin)
	}
	if p.MaxReceiveCount < MaxReceiveCountMin || p.MaxReceiveCount > MaxReceiveCountMax {
		return fmt.Errorf("%w: dead_letter.max_receive_count must be from %d to %d",
			domain.ErrInvalidArgument, MaxReceiveCountMin, MaxReceiveCountMax)
	}
	return nil
}

// Rule is the rule a Validate error (of a Policy or a Job) names, without
// the sentinel errors it wraps: what a refused request or entry says.
func Rule(err error) string {
	msg := strings.TrimPrefix(err.Error(), domain.ErrInvalidArgument.Error()+": ")
	return strings.TrimSuffix(msg, ": "+domain.ErrInvalidTopicName.Error())
}
