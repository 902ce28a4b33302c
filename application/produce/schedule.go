package produce

import (
	"fmt"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
)

// CheckSchedule is a message's schedule as the format pass checks it: at
// most one of a delay and a deliver-at, each an integer from 0 to
// DeliverAtMaxMs (milliseconds). A batch decoder calls it in its own format
// pass, so the first failing message decides.
func CheckSchedule(m Message) error {
	switch {
	case m.DelayMs != nil && m.DeliverAtMs != nil:
		return domain.Refuse(domain.ErrInvalidArgument, "delay_ms and deliver_at_ms exclude each other")
	case m.DelayMs != nil && (*m.DelayMs < 0 || *m.DelayMs > DeliverAtMaxMs):
		return domain.Refuse(domain.ErrInvalidArgument,
			fmt.Sprintf("invalid delay_ms: want an integer from 0 to %d (milliseconds)", int64(DeliverAtMaxMs)))
	case m.DeliverAtMs != nil && (*m.DeliverAtMs < 0 || *m.DeliverAtMs > DeliverAtMaxMs):
		return domain.Refuse(domain.ErrInvalidArgument,
			fmt.Sprintf("invalid deliver_at_ms: want an integer from 0 to %d (unix milliseconds)", int64(DeliverAtMaxMs)))
	}
	return nil
}

// scheduled reports whether m carries a schedule.
func scheduled(m Message) bool { return m.DelayMs != nil || m.DeliverAtMs != nil }

// deliverAt resolves m's schedule (checked by CheckSchedule) at nowMs: 0
// for a message delivered at once (no schedule, or a time not after now),
// else the unix ms before which it must not be delivered. A time beyond the
// topic's retention (or beyond DeliverAtMaxMs on a topic that keeps
// records forever) is refused with domain.ErrInvalidArgument: the
// retention is the schedule's only horizon.
func deliverAt(t meta.Topic, m Message, nowMs int64) (int64, error) {
	var at int64
	switch {
	case m.DelayMs != nil:
		at = nowMs + *m.DelayMs
	case m.DeliverAtMs != nil:
		at = *m.DeliverAtMs
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
