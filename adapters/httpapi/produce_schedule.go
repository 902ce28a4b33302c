package httpapi

import (
	"net/http"
	"strconv"
	"time"

	"github.com/narad/narad/application/produce"
)

// produceSchedule is a produce's optional schedule (api-extensions.md
// "Per-message delay"): a delay, or a deliver-at in unix milliseconds.
type produceSchedule struct {
	delay       time.Duration
	deliverAtMs int64
}

// scheduleQuery reads delay_ms and deliver_at_ms of a single produce.
func scheduleQuery(q query) (produceSchedule, error) {
	var delay, at *int64
	for _, f := range []struct {
		name string
		dst  **int64
	}{{"delay_ms", &delay}, {"deliver_at_ms", &at}} {
		s, ok, err := q.only(f.name)
		if err != nil || !ok {
			if err != nil {
				return produceSchedule{}, err
			}
			continue
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return produceSchedule{}, clientErr(http.StatusBadRequest, "invalid %s: want an integer of milliseconds", f.name)
		}
		*f.dst = &n
	}
	return scheduleOf(delay, at)
}

// scheduleOf checks a delay and a deliver-at, each optional: at most one,
// neither negative, a delay no longer than the latest deliver-at.
func scheduleOf(delayMs, deliverAtMs *int64) (produceSchedule, error) {
	var s produceSchedule
	switch {
	case delayMs != nil && deliverAtMs != nil:
		return s, clientErr(http.StatusBadRequest, "delay_ms and deliver_at_ms exclude each other")
	case delayMs != nil && (*delayMs < 0 || *delayMs > produce.DeliverAtMaxMs):
		return s, clientErr(http.StatusBadRequest, "invalid delay_ms: want an integer from 0 to %d (milliseconds)", int64(produce.DeliverAtMaxMs))
	case deliverAtMs != nil && (*deliverAtMs < 0 || *deliverAtMs > produce.DeliverAtMaxMs):
		return s, clientErr(http.StatusBadRequest, "invalid deliver_at_ms: want an integer from 0 to %d (unix milliseconds)", int64(produce.DeliverAtMaxMs))
	case delayMs != nil:
		s.delay = time.Duration(*delayMs) * time.Millisecond
	case deliverAtMs != nil:
		s.deliverAtMs = *deliverAtMs
	}
	return s, nil
}
