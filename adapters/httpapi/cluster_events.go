package httpapi

import (
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/narad/narad/domain/meta"
)

// Paging of GET /v1/cluster/events (docs/api-extensions.md).
const (
	eventsLimitDefault = 100
	eventsLimitMax     = 1000
	// eventsScanMaxEntries bounds how many journal entries one page reads
	// while it leaves heartbeats out (the journal keeps 10,000).
	eventsScanMaxEntries = meta.JournalKeep
	eventsScanChunk      = 1000
)

// eventJSON is one applied metadata entry: who changed what, when, and
// what apply decided.
type eventJSON struct {
	Seq     uint64 `json:"seq"`
	Index   uint64 `json:"index"`
	At      string `json:"at"`
	AtMs    int64  `json:"at_ms"`
	Actor   string `json:"actor,omitempty"`
	Type    string `json:"type"`
	Subject string `json:"subject"`
	Result  string `json:"result"`
	Detail  string `json:"detail,omitempty"`
}

type eventsJSON struct {
	Events     []eventJSON `json:"events"`
	NextBefore uint64      `json:"next_before"`
}

type eventsQuery struct {
	before     uint64
	limit      int
	heartbeats bool
}

func parseEventsQuery(raw string) (eventsQuery, error) {
	out := eventsQuery{limit: eventsLimitDefault}
	q, err := parseQuery(raw)
	if err != nil {
		return out, err
	}
	if v, ok, err := q.only("before"); err != nil || ok {
		if out.before, err = strconv.ParseUint(v, 10, 64); err != nil {
			return out, clientErr(http.StatusBadRequest, "before must be a non-negative integer")
		}
	}
	if v, ok, err := q.only("limit"); err != nil || ok {
		n, convErr := strconv.Atoi(v)
		if err != nil || convErr != nil || n < 1 {
			return out, clientErr(http.StatusBadRequest, "limit must be a positive integer")
		}
		out.limit = min(n, eventsLimitMax)
	}
	v, ok, err := q.only("heartbeats")
	switch {
	case err != nil || ok && v != "true" && v != "false":
		return out, clientErr(http.StatusBadRequest, "invalid heartbeats: must be true or false")
	case ok:
		out.heartbeats = v == "true"
	}
	return out, nil
}

// events answers a page of the metadata history, newest first. Member
// heartbeats are left out unless asked for; next_before is the before of
// the next (older) page, 0 when there is none.
func (h *clusterHandlers) events(c *gin.Context) {
	q, err := parseEventsQuery(c.Request.URL.RawQuery)
	if err != nil {
		respondError(c, h.log, err)
		return
	}
	out := eventsJSON{Events: make([]eventJSON, 0, q.limit)}
	before, scanned := q.before, 0
	for len(out.Events) < q.limit && scanned < eventsScanMaxEntries {
		asked := min(eventsScanChunk, eventsScanMaxEntries-scanned)
		chunk, err := h.store.History(before, asked)
		if err != nil {
			respondError(c, h.log, err)
			return
		}
		scanned += len(chunk)
		for _, e := range chunk {
			before = e.Seq
			if e.Type == meta.TypeMemberHeartbeat && !q.heartbeats {
				continue
			}
			if out.Events = append(out.Events, eventView(e)); len(out.Events) == q.limit {
				break
			}
		}
		if len(out.Events) < q.limit && len(chunk) < asked || before == 0 {
			before = 0 // the oldest entry kept was read
			break
		}
	}
	out.NextBefore = before
	respondJSON(c, http.StatusOK, out)
}

func eventView(e meta.JournalEntry) eventJSON {
	return eventJSON{Seq: e.Seq, Index: e.Index, AtMs: e.AtMs,
		At:    time.UnixMilli(e.AtMs).UTC().Format(time.RFC3339Nano),
		Actor: e.Actor, Type: e.Type.String(), Subject: e.Subject, Result: e.Code.String(), Detail: e.Detail}
}
