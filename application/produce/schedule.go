package produce

import (
	"fmt"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
)

// deliverAt resolves m's schedule at nowMs: 0 for a message delivered at
// once (no delay, or a deliver-at not after now), else the unix ms before
// which it must not be delivered. A delay and a deliver-at together, a
// negative one, or a time beyond the topic's retention (or beyond
// DeliverAtMaxMs on a topic that keeps records forever) is refused with
// domain.ErrInvalidArgument: the retention is the schedule's only horizon.
func deliverAt(t meta.Topic, m Message, nowMs int64) (int64, error) {
	switch {
	case m.Delay < 0:
		return 0, domain.Refuse(domain.ErrInvalidArgument, "invalid delay_ms: must be >= 0")
	case m.DeliverAtMs < 0:
		return 0, domain.Refuse(domain.ErrInvalidArgument, "invalid deliver_at_ms: must be >= 0")
	case m.Delay > 0 && m.DeliverAtMs > 0:
		return 0, domain.Refuse(domain.ErrInvalidArgument, "delay_ms and deliver_at_ms exclude each other")
	}
	at := m.DeliverAtMs
	if m.Delay > 0 {
		at = nowMs + m.Delay.Milliseconds()
	}
	if at <= nowMs {
		return 0, nil
	}
	horizon := int64(DeliverAtMaxMs)
	if t.RetentionMs > 0 && nowMs+t.RetentionMs < horizon {
		horizon = nowMs + t.RetentionMs
	}
	if at > horizon {
		return 0, domain.Refuse(domain.ErrInvalidArgument, fmt.Sprintf(
			"delivery %d ms from now is beyond what the topic keeps (retention %d ms)", at-nowMs, t.RetentionMs))
	}
	return at, nil
}
