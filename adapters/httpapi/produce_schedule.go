package httpapi

import (
	"net/http"
	"strconv"
)

// produceSchedule is a single produce's optional schedule (api-extensions.md
// "Per-message delay"), as sent; the produce use case checks its rules.
type produceSchedule struct {
	delayMs, deliverAtMs *int64
}

// scheduleQuery reads delay_ms and deliver_at_ms of a single produce: each
// at most once, each an integer.
func scheduleQuery(q query) (produceSchedule, error) {
	var s produceSchedule
	for _, f := range []struct {
		name string
		dst  **int64
	}{{"delay_ms", &s.delayMs}, {"deliver_at_ms", &s.deliverAtMs}} {
		v, ok, err := q.only(f.name)
		if err != nil {
			return s, err
		}
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return s, clientErr(http.StatusBadRequest, "invalid %s: want an integer of milliseconds", f.name)
		}
		*f.dst = &n
	}
	return s, nil
}
