package httpapi

import (
	"errors"
	"fmt"
	"github.com/narad/narad/domain/access"
	"io"
	"net/http"

	"github.com/gin-gonic/gin"
	"go.uber.org/zap"

	"github.com/narad/narad/application/produce"
	"github.com/narad/narad/domain"
)

// msgBodyTooLarge is the 413 message of the produce routes.
const msgBodyTooLarge = "request body too large"

// produceHandlers serve the produce routes over the produce use case.
type produceHandlers struct {
	svc       *produce.Service
	log       *zap.Logger
	admission *produceAdmission // nil: no per-identity cap
	budget    *bodyBudget       // nil: no batch-body budget
	identity  func(*gin.Context) string
	rejected  func()
}

// ProduceRoutes are POST /v1/topics/:topic/produce (api.md §2.13) and
// POST /v1/topics/:topic/produce/batch (§2.13.1), with no per-identity cap
// and no batch-body budget. It panics on nil dependencies.
func ProduceRoutes(svc *produce.Service, log *zap.Logger) []Route {
	return ProduceRoutesWith(svc, log, ProduceLimits{})
}

// ProduceRoutesWith is ProduceRoutes under the node's produce limits
// (api.md §0.8): each call holds its own counters, so call it once per node.
func ProduceRoutesWith(svc *produce.Service, log *zap.Logger, limits ProduceLimits) []Route {
	if svc == nil || log == nil {
		panic("httpapi: nil produce service or logger")
	}
	h := &produceHandlers{
		svc: svc, log: log, identity: limits.Identity, rejected: limits.BudgetRejected,
		admission: newProduceAdmission(limits.MaxInFlightPerIdentity),
		budget:    newBodyBudget(limits.MaxBatchBodyBytesInFlight),
	}
	if h.identity == nil {
		h.identity = func(c *gin.Context) string { return principalOf(c).Name }
	}
	if h.rejected == nil {
		h.rejected = func() {}
	}
	return []Route{
		{Method: http.MethodPost, Path: "/v1/topics/:topic/produce", Handle: h.single},
		{Method: http.MethodPost, Path: "/v1/topics/:topic/produce/batch", Handle: h.batch},
	}
}

// single stores the raw body as one message and answers 202 with an empty
// body once it is durable. It counts as one produce in flight throughout.
func (h *produceHandlers) single(c *gin.Context) {
	if !allow(c, h.log, access.Request{Op: access.OpProduce, Topic: access.Topic{Name: c.Param("topic")}}) {
		return
	}
	q, err := parseProduceQuery(c.Request.URL.RawQuery)
	if err != nil {
		respondError(c, h.log, err)
		return
	}
	ticket, err := h.admission.admit(h.identity(c))
	if err != nil {
		respondError(c, h.log, err)
		return
	}
	defer ticket.release()
	body, err := readBody(c.Request.Body, c.Request.ContentLength, produce.MessageMaxBytes)
	if err != nil {
		respondError(c, h.log, err)
		return
	}
	req := produce.Request{Topic: c.Param("topic"), Key: q.key, Payload: body,
		DelayMs: q.schedule.delayMs, DeliverAtMs: q.schedule.deliverAtMs}
	if q.hasPartition {
		req.Partition = &q.partition
	}
	if err := h.svc.Accept(c.Request.Context(), req); err != nil {
		respondError(c, h.log, err)
		return
	}
	c.Status(http.StatusAccepted)
}

// batch decodes {"messages":[...]} as a stream and accepts it all or
// nothing, answering 202 {"accepted":N}. It counts as one produce in flight
// while its body is read, then as its message count (clamped to the cap);
// a body over 1 MiB holds its share of the node's budget until answered.
func (h *produceHandlers) batch(c *gin.Context) {
	if !allow(c, h.log, access.Request{Op: access.OpProduce, Topic: access.Topic{Name: c.Param("topic")}}) {
		return
	}
	if err := refuseBatchQuery(c.Request.URL.RawQuery); err != nil {
		respondError(c, h.log, err)
		return
	}
	ticket, err := h.admission.admit(h.identity(c))
	if err != nil {
		respondError(c, h.log, err)
		return
	}
	defer ticket.release()
	body, err := openBatchBody(c.Request)
	if err != nil {
		respondError(c, h.log, err)
		return
	}
	defer body.Close()
	msgs, err := h.decodeBatch(body)
	if err == nil {
		err = ticket.resize(len(msgs))
	}
	if err == nil {
		err = h.svc.AcceptBatch(c.Request.Context(), c.Param("topic"), msgs)
	}
	if err != nil {
		h.batchError(c, err)
		return
	}
	respondJSON(c, http.StatusAccepted, batchAccepted{Accepted: len(msgs)})
}

// decodeBatch decodes body while it holds the node's batch-body budget.
func (h *produceHandlers) decodeBatch(body *batchBody) ([]produce.Message, error) {
	if err := body.holdBudget(h.budget); err != nil {
		return nil, err
	}
	return decodeBatch(body)
}

type batchAccepted struct {
	Accepted int `json:"accepted"`
}

// batchError answers a refusal; one naming a message gets the status a
// single produce of it would get and "message <i>: " before its text (a
// payload over the cap: 413 "message <i>: message too large").
func (h *produceHandlers) batchError(c *gin.Context, err error) {
	if errors.Is(err, errBatchBudgetFull) {
		h.rejected()
		c.Header("Retry-After", batchBodyBudgetRetryAfterSeconds)
		writeError(c, errBatchBudgetFull.status, errBatchBudgetFull.msg)
		return
	}
	var me *produce.MessageError
	if !errors.As(err, &me) {
		respondError(c, h.log, err)
		return
	}
	status, msg := statusOf(me.Err)
	if errors.Is(me.Err, domain.ErrRecordTooLarge) {
		status, msg = http.StatusRequestEntityTooLarge, "message too large"
	}
	if status >= http.StatusInternalServerError {
		h.log.Error("request failed", zap.String("route", c.FullPath()), zap.Int("status", status), zap.Error(err))
	}
	writeError(c, status, fmt.Sprintf("message %d: %s", me.Index, msg))
}

// refuseBatchQuery refuses the single-produce parameters on the batch route;
// anything else in the query is ignored.
func refuseBatchQuery(raw string) error {
	q, err := parseQuery(raw)
	if err != nil {
		return err
	}
	for _, name := range []string{"key", "partition", "delay_ms", "deliver_at_ms"} {
		if q.has(name) {
			return clientErr(http.StatusBadRequest, "%s is set per message in a batch produce, not as a query parameter", name)
		}
	}
	return nil
}

// readBody reads at most limit bytes of r. A body declared at most
// bodyExactMaxBytes long is read into a buffer of exactly that size; any
// other starts at bodyExactMaxBytes and grows bodyGrowFactor-fold as it
// fills, so a declared length never decides an allocation on its own.
// Past limit: 413 "request body too large"; past the read deadline: 408
// (errBodyTimeout).
func readBody(r io.Reader, declared int64, limit int) ([]byte, error) {
	if declared > int64(limit) {
		return nil, clientErr(http.StatusRequestEntityTooLarge, msgBodyTooLarge)
	}
	size := bodyExactMaxBytes
	if declared >= 0 && declared < bodyExactMaxBytes {
		size = int(declared) + 1 // one spare byte sees the end without growing
	}
	buf := make([]byte, 0, min(size, limit+1))
	for {
		if len(buf) == cap(buf) {
			if len(buf) > limit {
				return nil, clientErr(http.StatusRequestEntityTooLarge, msgBodyTooLarge)
			}
			grown := make([]byte, len(buf), min(cap(buf)*bodyGrowFactor, limit+1))
			copy(grown, buf)
			buf = grown
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		switch {
		case errors.Is(err, io.EOF):
			if len(buf) > limit {
				return nil, clientErr(http.StatusRequestEntityTooLarge, msgBodyTooLarge)
			}
			return buf, nil
		case err != nil:
			return nil, bodyReadError(err, "read body")
		}
	}
}
