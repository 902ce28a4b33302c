package httpapi

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/narad/narad/application/topics"
	"github.com/narad/narad/domain/meta"
)

// redriveBody starts a redrive job (our extension, docs/api-extensions.md
// "Redrive"); every field is optional and an empty body is {}.
type redriveBody struct {
	To          *string `json:"to"`
	RatePerSec  *int64  `json:"rate_per_sec"`
	MaxMessages *int64  `json:"max_messages"`
}

// redriveJSON is a redrive job as the API shows it.
type redriveJSON struct {
	ID          string `json:"id"`
	To          string `json:"to,omitempty"`
	RatePerSec  uint32 `json:"rate_per_sec"`
	MaxMessages uint64 `json:"max_messages"`
	State       string `json:"state"`
	Moved       uint64 `json:"moved"`
	Skipped     uint64 `json:"skipped"`
	Runs        uint32 `json:"runs"`
	Error       string `json:"error,omitempty"`
	By          string `json:"started_by,omitempty"`
	StartedAtMs int64  `json:"started_at_ms"`
	UpdatedAtMs int64  `json:"updated_at_ms"`
}

func redriveView(j *meta.Redrive) *redriveJSON {
	if j == nil {
		return nil
	}
	return &redriveJSON{ID: j.ID, To: j.To, RatePerSec: j.RatePerSec, MaxMessages: j.MaxMessages, State: j.State,
		Moved: j.Moved, Skipped: j.Skipped, Runs: j.Runs, Error: j.Error, By: j.By, StartedAtMs: j.StartedAtMs, UpdatedAtMs: j.UpdatedAtMs}
}

// startRedrive is POST /v1/topics/{topic}/redrive: 202 with the job.
func (h *topicHandlers) startRedrive(c *gin.Context) {
	var b redriveBody
	if c.Request.ContentLength != 0 {
		if err := decodeTopicBody(c.Request.Body, &b); err != nil {
			respondError(c, h.log, err)
			return
		}
	}
	j, err := h.svc.StartRedrive(c.Request.Context(), topics.RedriveRequest{
		Caller: principalOf(c), Name: c.Param("topic"), To: b.To, RatePerSec: b.RatePerSec, MaxMessages: b.MaxMessages,
	})
	if err != nil {
		respondError(c, h.log, err)
		return
	}
	respondJSON(c, http.StatusAccepted, redriveView(&j))
}

// redrive is GET /v1/topics/{topic}/redrive: the last job started, 404 when
// none was.
func (h *topicHandlers) redrive(c *gin.Context) {
	j, err := h.svc.Redrive(principalOf(c), c.Param("topic"))
	if err != nil {
		respondError(c, h.log, err)
		return
	}
	respondJSON(c, http.StatusOK, redriveView(&j))
}

// cancelRedrive is DELETE /v1/topics/{topic}/redrive: 200 with the job as
// cancelled, 409 when none runs.
func (h *topicHandlers) cancelRedrive(c *gin.Context) {
	j, err := h.svc.CancelRedrive(c.Request.Context(), principalOf(c), c.Param("topic"))
	if err != nil {
		respondError(c, h.log, err)
		return
	}
	respondJSON(c, http.StatusOK, redriveView(&j))
}
