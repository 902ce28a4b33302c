package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"github.com/narad/narad/domain/access"
	"io"
	"net/http"

	"github.com/gin-gonic/gin"
	"go.uber.org/zap"

	"github.com/narad/narad/application/consume"
	"github.com/narad/narad/domain"
)

// Batch ack limits (api.md §0.2, §2.15.1).
const (
	ackBatchBodyMaxBytes = 64 << 10 // a batch ack body; one byte more is 413
	ackBatchHandlesMax   = 100      // handles per batch ack
)

// ackBatchBody is the batch ack request body.
type ackBatchBody struct {
	ReceiptHandles []string `json:"receipt_handles"`
}

// ackResult is one handle's outcome in a batch ack answer.
type ackResult struct {
	Status int    `json:"status"`
	Error  string `json:"error,omitempty"`
}

// ack serves both forms: a receipt_handle in the query settles one lease
// (204); without one, the JSON body lists up to 100 handles, each settled
// independently (200 with one result per handle, in order).
func (r *consumeRoutes) ack(c *gin.Context) {
	if !allow(c, r.log, access.Request{Op: access.OpConsume, Topic: access.Topic{Name: c.Param("topic")}}) {
		return
	}
	q, err := parseQuery(c.Request.URL.RawQuery)
	if err != nil {
		respondError(c, r.log, err)
		return
	}
	raw, single, err := q.first("receipt_handle")
	if err != nil {
		respondError(c, r.log, err)
		return
	}
	op, err := parseExtend(q)
	if err != nil {
		respondError(c, r.log, err)
		return
	}
	s := settlement{op: consumeOpOf(op)}
	if s.nack.Delay, err = parseNackDelay(q, op); err == nil {
		s.nack.Reason, err = parseNackReason(q, op)
	}
	if err != nil {
		respondError(c, r.log, err)
		return
	}
	if single {
		r.ackOne(c, raw, s)
		return
	}
	r.ackBatch(c, s)
}

// settlement is what an ack request does: its op, and a nack's delay and
// reason (api-extensions.md "Nack with a delay or a reason").
type settlement struct {
	op   consume.Op
	nack consume.NackOptions
}

func (r *consumeRoutes) settleOne(c *gin.Context, h domain.ReceiptHandle, s settlement) error {
	if s.nack != (consume.NackOptions{}) {
		return r.svc.NackWith(c.Request.Context(), c.Param("topic"), h, s.nack)
	}
	return r.svc.Settle(c.Request.Context(), c.Param("topic"), h, s.op)
}

func (r *consumeRoutes) settleBatch(c *gin.Context, hs []domain.ReceiptHandle, s settlement) ([]error, error) {
	if s.nack != (consume.NackOptions{}) {
		return r.svc.NackBatchWith(c.Request.Context(), c.Param("topic"), hs, s.nack)
	}
	return r.svc.AckBatch(c.Request.Context(), c.Param("topic"), hs, s.op)
}

func consumeOpOf(op ackOp) consume.Op {
	switch op {
	case opExtend:
		return consume.OpExtend
	case opNack:
		return consume.OpNack
	}
	return consume.OpAck
}

func (r *consumeRoutes) ackOne(c *gin.Context, raw string, s settlement) {
	if raw == "" {
		respondError(c, r.log, clientErr(http.StatusBadRequest, "receipt_handle required"))
		return
	}
	h, err := domain.ParseReceiptHandle(raw)
	if err == nil {
		err = r.settleOne(c, h, s)
	}
	if err != nil {
		respondRouteError(c, r.log, err)
		return
	}
	c.Status(http.StatusNoContent)
}

func (r *consumeRoutes) ackBatch(c *gin.Context, s settlement) {
	body, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, ackBatchBodyMaxBytes))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		respondError(c, r.log, clientErr(http.StatusRequestEntityTooLarge, "request body too large"))
		return
	case err != nil:
		respondError(c, r.log, bodyReadError(err, "invalid json"))
		return
	case len(body) == 0:
		respondError(c, r.log, clientErr(http.StatusBadRequest, "receipt_handle required"))
		return
	}
	raws, err := decodeAckBatch(body)
	if err != nil {
		respondError(c, r.log, err)
		return
	}
	results, err := r.settleAll(c, raws, s)
	if err != nil {
		respondError(c, r.log, err)
		return
	}
	respondJSON(c, http.StatusOK, struct {
		Results []ackResult `json:"results"`
	}{results})
}

// settleAll parses each handle (a bad one earns its own 400 entry) and
// settles the rest in one call; only a missing topic fails the request.
func (r *consumeRoutes) settleAll(c *gin.Context, raws []string, s settlement) ([]ackResult, error) {
	results := make([]ackResult, len(raws))
	var handles []domain.ReceiptHandle
	var at []int
	for i, raw := range raws {
		h, err := domain.ParseReceiptHandle(raw)
		if err != nil {
			results[i] = r.resultOf(c, err)
			continue
		}
		handles, at = append(handles, h), append(at, i)
	}
	errs, err := r.settleBatch(c, handles, s)
	if err != nil {
		return nil, err
	}
	for j, err := range errs {
		results[at[j]] = r.resultOf(c, err)
	}
	return results, nil
}

func (r *consumeRoutes) resultOf(c *gin.Context, err error) ackResult {
	if err == nil {
		return ackResult{Status: http.StatusNoContent}
	}
	status, msg := statusOf(err)
	if status >= http.StatusInternalServerError {
		r.log.Error("batch ack handle failed", zap.String("route", c.FullPath()), zap.Int("status", status), zap.Error(err))
	}
	return ackResult{Status: status, Error: msg}
}

// decodeAckBatch decodes a batch ack body strictly (api.md §0.2) and checks
// its handle count; the handles themselves are parsed one by one later.
func decodeAckBatch(body []byte) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	var req ackBatchBody
	if err := dec.Decode(&req); err != nil {
		return nil, clientErr(http.StatusBadRequest, "invalid json: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, clientErr(http.StatusBadRequest, "invalid json: multiple JSON values")
	}
	switch n := len(req.ReceiptHandles); {
	case n == 0:
		return nil, clientErr(http.StatusBadRequest, "receipt_handles required")
	case n > ackBatchHandlesMax:
		return nil, clientErr(http.StatusBadRequest, "too many receipt_handles: more than %d (max %d)", ackBatchHandlesMax, ackBatchHandlesMax)
	}
	return req.ReceiptHandles, nil
}
