package httpapi

import (
	"context"
	"net/http"
	"slices"

	"github.com/gin-gonic/gin"

	"github.com/narad/narad/domain/meta"
)

// Member states a move's ends are shown in (api.md §2.17).
const (
	moveEndDraining  = "draining"
	moveEndNotMember = "not_a_member"
)

// moveJSON is one partition being moved.
type moveJSON struct {
	Topic      string `json:"topic"`
	Partition  int32  `json:"partition"`
	From       string `json:"from"`
	To         string `json:"to"`
	FromStatus string `json:"from_status"`
	ToStatus   string `json:"to_status"`
	Blocked    string `json:"blocked,omitempty"`
	// Worker and WorkerError come with detail=true: the destination's
	// report of its worker, or why it could not be read.
	Worker      *moveWorkerJSON `json:"worker,omitempty"`
	WorkerError string          `json:"worker_error,omitempty"`
}

// moves lists the partitions with a move target, by topic then partition,
// with the state of each end read from the member table.
func (h *clusterHandlers) moves(c *gin.Context) {
	detail, err := parseDetail(c.Request.URL.RawQuery)
	if err != nil {
		respondError(c, h.log, err)
		return
	}
	moves, err := h.store.Moves()
	if err != nil {
		respondError(c, h.log, err)
		return
	}
	members, err := h.store.Members()
	if err != nil {
		respondError(c, h.log, err)
		return
	}
	byID := make(map[string]meta.Member, len(members))
	for _, m := range members {
		byID[m.ID] = m
	}
	out := make([]moveJSON, 0, len(moves))
	for _, mv := range moves {
		j := moveJSON{Topic: mv.Topic, Partition: mv.Partition, From: mv.From, To: mv.To,
			FromStatus: endStatus(byID, mv.From), ToStatus: endStatus(byID, mv.To)}
		j.Blocked = moveBlocked(j)
		out = append(out, j)
	}
	if detail && len(out) > 0 {
		h.addWorkers(c.Request.Context(), out)
	}
	respondJSON(c, http.StatusOK, map[string][]moveJSON{"moves": out})
}

// addWorkers asks each destination for its workers (2 s in all) and puts
// each move's report, or why it is missing, on it.
func (h *clusterHandlers) addWorkers(ctx context.Context, out []moveJSON) {
	var ids []string
	for _, j := range out {
		if !slices.Contains(ids, j.To) {
			ids = append(ids, j.To)
		}
	}
	got, failed := h.members.Statuses(ctx, ids)
	for i := range out {
		j := &out[i]
		st, ok := got[j.To]
		if !ok {
			j.WorkerError = failed[j.To]
			continue
		}
		j.WorkerError = "no worker runs this move on " + j.To
		for _, m := range st.Moves {
			if m.Topic == j.Topic && m.Partition == j.Partition {
				w := moveWorkerOf(m)
				j.Worker, j.WorkerError = &w, ""
			}
		}
	}
}

func endStatus(members map[string]meta.Member, id string) string {
	m, ok := members[id]
	switch {
	case !ok:
		return moveEndNotMember
	case m.Status == meta.StatusDead:
		return meta.StatusDead
	case m.Draining:
		return moveEndDraining
	}
	return meta.StatusAlive
}

// moveBlocked names what stops a move, or "" while it can progress.
func moveBlocked(j moveJSON) string {
	switch {
	case j.FromStatus == meta.StatusDead:
		return "source_dead"
	case j.ToStatus == meta.StatusDead:
		return "target_dead"
	case j.ToStatus == moveEndNotMember:
		return "target_not_member"
	}
	return ""
}
