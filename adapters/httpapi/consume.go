package httpapi

import (
	"errors"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"go.uber.org/zap"

	"github.com/narad/narad/application/consume"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/access"
)

// waitClampedHeader carries the wait a consume actually used when the one
// asked for was above the server ceiling (api.md §0.3).
const waitClampedHeader = "X-Narad-Wait-Clamped"

// consumeRoutes serves the consume and ack routes on one use case.
type consumeRoutes struct {
	svc      *consume.Service
	log      *zap.Logger
	maxWait  time.Duration
	identity func(*gin.Context) string
}

// ConsumeRoutes are GET /v1/topics/:topic/consume (queue, pinned, batch
// and replay modes, api.md §2.14) and POST /v1/topics/:topic/ack (single
// and batch ack, extend and nack, api.md §2.15). maxWait is
// http.max_consume_wait. identity names who a request counts against for
// the per-identity consume cap; nil counts by the authenticated user (the
// client's IP address with security off).
func ConsumeRoutes(svc *consume.Service, log *zap.Logger, maxWait time.Duration, identity func(*gin.Context) string) []Route {
	if identity == nil {
		identity = func(c *gin.Context) string { return principalOf(c).Name }
	}
	r := &consumeRoutes{svc: svc, log: log, maxWait: maxWait, identity: identity}
	return []Route{
		{Method: http.MethodGet, Path: "/v1/topics/:topic/consume", Handle: r.consume},
		{Method: http.MethodPost, Path: "/v1/topics/:topic/ack", Handle: r.ack},
	}
}

func (r *consumeRoutes) consume(c *gin.Context) {
	if !allow(c, r.log, access.Request{Op: access.OpConsume, Topic: access.Topic{Name: c.Param("topic")}}) {
		return
	}
	p, err := parseConsumeQuery(c.Request.URL.RawQuery, c.GetHeader(clientHeader) != "")
	if err != nil {
		respondError(c, r.log, err)
		return
	}
	req := consume.Request{Topic: c.Param("topic"), Partition: p.partition, Offset: p.offset, Max: p.max,
		Identity: r.identity(c), ForwardIdentity: forwardIdentity(c), LocalOnly: p.localOnly}
	req.Mode, req.Pinned = consumeModeOf(p)
	if req.Mode != consume.ModeReplay && !p.localOnly {
		req.Wait = r.clampWait(c, p.wait)
	}
	ds, err := r.svc.Consume(c.Request.Context(), req)
	switch {
	case req.Mode == consume.ModeReplay && errors.Is(err, domain.ErrOffsetNotWritten):
		c.Status(http.StatusNoContent)
	case err != nil && c.Request.Context().Err() != nil:
		c.Abort() // the client went away: nothing to answer
	case err != nil:
		respondRouteError(c, r.log, err)
	case len(ds) == 0:
		c.Status(http.StatusNoContent)
	default:
		buf := answerPool.Get().(*[]byte)
		var body []byte
		if req.Mode == consume.ModeBatch {
			body = appendMessages((*buf)[:0], ds)
		} else {
			body = appendEnvelope((*buf)[:0], ds[0])
		}
		writeJSONBody(c, body)
		if cap(body) <= answerPooledMaxBytes {
			*buf = body[:0]
			answerPool.Put(buf)
		}
	}
}

// answerPool keeps the buffers consume answers are rendered into. A
// ResponseWriter's Write has copied or sent the bytes when it returns
// (HTTP/1.1 and HTTP/2 alike), so a buffer is free once its answer is
// written; buffers above answerPooledMaxBytes are left to the collector.
var answerPool = sync.Pool{New: func() any { return new([]byte) }}

const answerPooledMaxBytes = 256 << 10

// retryAfterOwnerDown is the Retry-After of a dead owner's 503 and of a
// single ack's forward that never left (api.md §2.14, §2.15).
const retryAfterOwnerDown = "1"

// respondRouteError answers a consume or settle error. The owner-routing
// failures are plain text (api.md §3.3): a dead owner's 503 and an ack
// forward's that never left, each with Retry-After: 1; a forward without
// an answer 502; the rest go through the error table as JSON.
func respondRouteError(c *gin.Context, log *zap.Logger, err error) {
	retry := errors.Is(err, domain.ErrOwnerDown) || errors.Is(err, domain.ErrOwnerNotReached)
	if !retry && !errors.Is(err, domain.ErrOwnerNoAnswer) {
		respondError(c, log, err)
		return
	}
	status, msg := statusOf(err)
	log.Error("request failed", zap.String("route", c.FullPath()), zap.Int("status", status), zap.Error(err))
	if retry {
		c.Header("Retry-After", retryAfterOwnerDown)
	}
	c.Data(status, "text/plain; charset=utf-8", []byte(msg+"\n"))
}

func consumeModeOf(p consumeParams) (consume.Mode, bool) {
	switch p.mode {
	case modeReplay:
		return consume.ModeReplay, true
	case modeBatch:
		return consume.ModeBatch, p.hasPartition
	case modePinned:
		return consume.ModePinned, true
	}
	return consume.ModeQueue, false
}

// clampWait bounds the long poll by the server ceiling, saying so in a
// header when it lowered it.
func (r *consumeRoutes) clampWait(c *gin.Context, wait time.Duration) time.Duration {
	if wait > r.maxWait {
		c.Header(waitClampedHeader, r.maxWait.String())
		return r.maxWait
	}
	return wait
}

// appendEnvelope renders a single answer: the envelope and a newline.
func appendEnvelope(dst []byte, d domain.Delivery) []byte {
	return append(domain.AppendEnvelope(slices.Grow(dst, envelopeCapacity(d)), d), '\n')
}

// appendMessages renders a batch answer: {"messages":[...]} and a newline.
func appendMessages(dst []byte, ds []domain.Delivery) []byte {
	n := 0
	for _, d := range ds {
		n += envelopeCapacity(d)
	}
	dst = append(slices.Grow(dst, n+16), `{"messages":[`...)
	for i, d := range ds {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = domain.AppendEnvelope(dst, d)
	}
	return append(dst, "]}\n"...)
}

// envelopeCapacity guesses an envelope's size for one allocation.
func envelopeCapacity(d domain.Delivery) int {
	return 160 + len(d.Topic) + len(d.Record.Key)*4/3 + len(d.Record.Payload)*4/3
}

// writeJSONBody answers 200 with body as JSON and its exact length.
func writeJSONBody(c *gin.Context, body []byte) {
	c.Header("Content-Length", strconv.Itoa(len(body)))
	c.Data(http.StatusOK, "application/json", body)
}

// forwardIdentity is the user a consume forwarded to another owner acts for
// there (its consume cap keys on it); empty with security off.
func forwardIdentity(c *gin.Context) string {
	if p := principalOf(c); p.Secured() {
		return p.Name
	}
	return ""
}
