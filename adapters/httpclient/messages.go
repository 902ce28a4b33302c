package httpclient

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"
	"unicode/utf8"
)

// ErrEmptyMessage is returned, without sending anything, for an empty body
// or an empty receipt handle: the server refuses both.
var ErrEmptyMessage = errors.New("httpclient: message required")

// Produce sends one message (202). key is optional (empty = none); partition,
// when not nil, pins the partition and overrides the key.
func (c *Client) Produce(ctx context.Context, topic string, body []byte, key string, partition *int) error {
	return c.ProduceScheduled(ctx, topic, body, key, partition, Schedule{})
}

// Schedule is a produce's optional schedule (a per-message delay, ours): a
// Delay, or a DeliverAt time; the zero Schedule delivers at once.
type Schedule struct {
	Delay     time.Duration
	DeliverAt time.Time
}

// delayMs and deliverAtMs are s's wire values, 0 when unset.
func (s Schedule) delayMs() int64 { return s.Delay.Milliseconds() }
func (s Schedule) deliverAtMs() int64 {
	if s.DeliverAt.IsZero() {
		return 0
	}
	return s.DeliverAt.UnixMilli()
}

// ProduceScheduled is Produce with a schedule: the message is not
// delivered before s says (delay_ms or deliver_at_ms).
func (c *Client) ProduceScheduled(ctx context.Context, topic string, body []byte, key string, partition *int, s Schedule) error {
	if len(body) == 0 {
		return ErrEmptyMessage
	}
	q := url.Values{}
	if key != "" {
		q.Set("key", key)
	}
	if partition != nil {
		q.Set("partition", strconv.Itoa(*partition))
	}
	if ms := s.delayMs(); ms > 0 {
		q.Set("delay_ms", strconv.FormatInt(ms, 10))
	}
	if ms := s.deliverAtMs(); ms > 0 {
		q.Set("deliver_at_ms", strconv.FormatInt(ms, 10))
	}
	_, err := c.do(ctx, request{method: http.MethodPost, path: topicPath(topic, "/produce"), query: q, body: body, contentType: "application/octet-stream"})
	return err
}

// BatchMessage is one message of a batch produce.
type BatchMessage struct {
	Key       []byte // optional
	Payload   []byte // required, any bytes
	Partition *int   // optional pin
	Schedule  Schedule
}

// wireBatchMessage is one element of the batch produce body (api.md §2.13.1).
type wireBatchMessage struct {
	Key             string          `json:"key,omitempty"`
	KeyEncoding     string          `json:"key_encoding,omitempty"`
	Payload         json.RawMessage `json:"payload"`
	PayloadEncoding string          `json:"payload_encoding,omitempty"`
	Partition       *int            `json:"partition,omitempty"`
	DelayMs         int64           `json:"delay_ms,omitempty"`
	DeliverAtMs     int64           `json:"deliver_at_ms,omitempty"`
}

// ProduceBatch sends messages in one all-or-nothing request and returns the
// server's accepted count. A payload that is compact valid JSON travels as
// itself (stored byte for byte); any other payload travels as base64, as does
// a key that is not valid UTF-8.
func (c *Client) ProduceBatch(ctx context.Context, topic string, msgs []BatchMessage) (int, error) {
	if len(msgs) == 0 {
		return 0, ErrEmptyMessage
	}
	wire := make([]wireBatchMessage, len(msgs))
	for i, m := range msgs {
		if len(m.Payload) == 0 {
			return 0, fmt.Errorf("message %d: %w", i, ErrEmptyMessage)
		}
		wire[i] = encodeBatchMessage(m)
	}
	var ans struct {
		Accepted *int `json:"accepted"`
	}
	err := c.sendJSON(ctx, http.MethodPost, topicPath(topic, "/produce/batch"), struct {
		Messages []wireBatchMessage `json:"messages"`
	}{wire}, &ans)
	if err != nil {
		return 0, err
	}
	if ans.Accepted == nil {
		return 0, fmt.Errorf("batch produce: no accepted count: %w", ErrMalformedReply)
	}
	return *ans.Accepted, nil
}

func encodeBatchMessage(m BatchMessage) wireBatchMessage {
	w := wireBatchMessage{Partition: m.Partition, DelayMs: m.Schedule.delayMs(), DeliverAtMs: m.Schedule.deliverAtMs()}
	if isCompactJSON(m.Payload) {
		w.Payload = m.Payload
	} else {
		w.Payload = quoteBase64(m.Payload)
		w.PayloadEncoding = encodingBase64
	}
	switch {
	case len(m.Key) == 0:
	case utf8.Valid(m.Key):
		w.Key = string(m.Key)
	default:
		w.Key = base64.StdEncoding.EncodeToString(m.Key)
		w.KeyEncoding = encodingBase64
	}
	return w
}

// isCompactJSON reports whether b is one JSON text without insignificant
// whitespace, so the request carries exactly b.
func isCompactJSON(b []byte) bool {
	if !utf8.Valid(b) || !json.Valid(b) {
		return false
	}
	var buf bytes.Buffer
	return json.Compact(&buf, b) == nil && bytes.Equal(buf.Bytes(), b)
}

func quoteBase64(b []byte) json.RawMessage {
	out := make([]byte, 0, base64.StdEncoding.EncodedLen(len(b))+2)
	out = append(out, '"')
	out = base64.StdEncoding.AppendEncode(out, b)
	return append(out, '"')
}

// ConsumeOptions shape a queue, pinned or batch consume.
type ConsumeOptions struct {
	// Wait is the long-poll budget (0 = answer at once).
	Wait time.Duration
	// Partition, when not nil, consumes from that partition only.
	Partition *int
	// Max > 0 asks for a batch of up to Max messages (api.md §2.14.3).
	Max int
}

// ConsumeResult is a consume's answer.
type ConsumeResult struct {
	// Messages is empty when nothing arrived within the wait (204).
	Messages []Message
	// WaitClamped is the X-Narad-Wait-Clamped header: the wait the server
	// used when it lowered the one asked for; empty otherwise.
	WaitClamped string
}

// Consume leases messages from a topic.
func (c *Client) Consume(ctx context.Context, topic string, o ConsumeOptions) (ConsumeResult, error) {
	q := url.Values{}
	if o.Wait > 0 {
		q.Set("wait", o.Wait.String())
	}
	if o.Partition != nil {
		q.Set("partition", strconv.Itoa(*o.Partition))
	}
	if o.Max > 0 {
		q.Set("max", strconv.Itoa(o.Max))
	}
	rep, err := c.do(ctx, request{method: http.MethodGet, path: topicPath(topic, "/consume"), query: q, extra: o.Wait})
	if err != nil {
		return ConsumeResult{}, err
	}
	res := ConsumeResult{WaitClamped: rep.header.Get("X-Narad-Wait-Clamped")}
	if rep.status == http.StatusNoContent {
		return res, nil
	}
	res.Messages, err = DecodeMessages(rep.body, o.Max > 0)
	return res, err
}

// ReplayResult is the answer of a replay read; Status tells which of three.
type ReplayResult struct {
	// Status is 200 (Message set), 204 (offset at or past the high
	// watermark) or 410 (offset aged out or unreadable; Reason says why).
	Status  int
	Message *Message
	Reason  string
}

// Replay reads the record at (partition, offset) without leasing it.
func (c *Client) Replay(ctx context.Context, topic string, partition int, offset int64) (ReplayResult, error) {
	q := url.Values{}
	q.Set("partition", strconv.Itoa(partition))
	q.Set("offset", strconv.FormatInt(offset, 10))
	rep, err := c.do(ctx, request{method: http.MethodGet, path: topicPath(topic, "/consume"), query: q})
	var ae *APIError
	switch {
	case errors.As(err, &ae) && ae.Status == http.StatusGone:
		return ReplayResult{Status: http.StatusGone, Reason: ae.Message}, nil
	case err != nil:
		return ReplayResult{}, err
	case rep.status == http.StatusNoContent:
		return ReplayResult{Status: http.StatusNoContent}, nil
	}
	m, err := DecodeEnvelope(rep.body)
	if err != nil {
		return ReplayResult{}, err
	}
	return ReplayResult{Status: http.StatusOK, Message: &m}, nil
}

// AckOp is what an ack request does with its handles.
type AckOp int

const (
	// OpAck settles the message for good.
	OpAck AckOp = iota
	// OpExtend renews the lease for a full visibility timeout.
	OpExtend
	// OpNack releases the lease for immediate redelivery.
	OpNack
)

// extendValue is the `extend` query value of op ("" for an ack).
func (op AckOp) extendValue() string {
	switch op {
	case OpExtend:
		return "true"
	case OpNack:
		return "0"
	}
	return ""
}

func (op AckOp) String() string {
	return [...]string{"ack", "extend", "nack"}[op]
}

// Ack settles a leased message (204).
func (c *Client) Ack(ctx context.Context, topic, handle string) error {
	return c.settle(ctx, topic, handle, OpAck, NackOptions{})
}

// Extend renews a lease (204); the handle stays valid.
func (c *Client) Extend(ctx context.Context, topic, handle string) error {
	return c.settle(ctx, topic, handle, OpExtend, NackOptions{})
}

// Nack releases a lease for immediate redelivery (204).
func (c *Client) Nack(ctx context.Context, topic, handle string) error {
	return c.settle(ctx, topic, handle, OpNack, NackOptions{})
}

// NackAfter releases a lease and keeps the message from redelivery for
// delay, sent as whole milliseconds (204; docs/api-extensions.md "Nack
// with a delay or a reason"). A delay of 0 is Nack.
func (c *Client) NackAfter(ctx context.Context, topic, handle string, delay time.Duration) error {
	return c.NackWith(ctx, topic, handle, NackOptions{Delay: delay})
}

// NackOptions is what a nack may carry (docs/api-extensions.md "Nack with
// a delay or a reason"); the zero value is a plain Nack.
type NackOptions struct {
	// Delay keeps the message from redelivery this long, sent as whole
	// milliseconds (delay_ms); 0 sends none.
	Delay time.Duration
	// Reason is kept as the message's last nack reason by a topic with a
	// dead-letter policy and written into its dead letter (1 to 1024
	// bytes of UTF-8); "" sends none.
	Reason string
}

// NackWith releases a lease with opts' delay and reason (204).
func (c *Client) NackWith(ctx context.Context, topic, handle string, opts NackOptions) error {
	return c.settle(ctx, topic, handle, OpNack, opts)
}

func (c *Client) settle(ctx context.Context, topic, handle string, op AckOp, nack NackOptions) error {
	if handle == "" {
		return ErrEmptyMessage
	}
	q := settleQuery(op, nack)
	q.Set("receipt_handle", handle)
	_, err := c.do(ctx, request{method: http.MethodPost, path: topicPath(topic, "/ack"), query: q, contentType: "application/json"})
	return err
}

// AckResult is one handle's outcome in a batch ack: Status is what the single
// form would have answered (204 = done); Error accompanies any other status.
type AckResult struct {
	Status int    `json:"status"`
	Error  string `json:"error,omitempty"`
}

// AckBatch applies op to every handle (1-100) in one request and returns one
// result per handle, in order. The request as a whole fails only on its own
// errors (a 4xx or 5xx status, a transport error, a malformed answer).
func (c *Client) AckBatch(ctx context.Context, topic string, handles []string, op AckOp) ([]AckResult, error) {
	return c.ackBatch(ctx, topic, handles, op, NackOptions{})
}

// NackBatchAfter is AckBatch nacking every handle with delay (NackAfter).
func (c *Client) NackBatchAfter(ctx context.Context, topic string, handles []string, delay time.Duration) ([]AckResult, error) {
	return c.NackBatchWith(ctx, topic, handles, NackOptions{Delay: delay})
}

// NackBatchWith is AckBatch nacking every handle with opts (NackWith).
func (c *Client) NackBatchWith(ctx context.Context, topic string, handles []string, opts NackOptions) ([]AckResult, error) {
	return c.ackBatch(ctx, topic, handles, OpNack, opts)
}

// settleQuery is the query of an ack request: extend for op, and for a
// nack delay_ms and reason when it carries them.
func settleQuery(op AckOp, nack NackOptions) url.Values {
	q := url.Values{}
	if v := op.extendValue(); v != "" {
		q.Set("extend", v)
	}
	if op != OpNack {
		return q
	}
	if nack.Delay > 0 {
		q.Set("delay_ms", strconv.FormatInt(nack.Delay.Milliseconds(), 10))
	}
	if nack.Reason != "" {
		q.Set("reason", nack.Reason)
	}
	return q
}

func (c *Client) ackBatch(ctx context.Context, topic string, handles []string, op AckOp, nack NackOptions) ([]AckResult, error) {
	if len(handles) == 0 {
		return nil, ErrEmptyMessage
	}
	body, err := marshalJSON(struct {
		ReceiptHandles []string `json:"receipt_handles"`
	}{handles})
	if err != nil {
		return nil, err
	}
	q := settleQuery(op, nack)
	path := topicPath(topic, "/ack")
	rep, err := c.do(ctx, request{method: http.MethodPost, path: path, query: q, body: body, contentType: "application/json"})
	if err != nil {
		return nil, err
	}
	var ans struct {
		Results []AckResult `json:"results"`
	}
	if err := decodeReply(http.MethodPost, path, rep, &ans); err != nil {
		return nil, err
	}
	if len(ans.Results) != len(handles) {
		return nil, fmt.Errorf("batch ack: %d results for %d handles: %w", len(ans.Results), len(handles), ErrMalformedReply)
	}
	return ans.Results, nil
}
