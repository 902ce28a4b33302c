package httpapi

import (
	"net/http"

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
}

// moves lists the partitions with a move target, by topic then partition,
// with the state of each end read from the member table.
func (h *clusterHandlers) moves(c *gin.Context) {
	if _, err := parseDetail(c.Request.URL.RawQuery); err != nil {
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
	respondJSON(c, http.StatusOK, map[string][]moveJSON{"moves": out})
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
