package httpapi

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/narad/narad/application/produce"
	"github.com/narad/narad/domain"
)

// msg415Encoding is the batch route's 415 for an unknown Content-Encoding.
const msg415Encoding = "unsupported Content-Encoding: want zstd, gzip or none"

var errBodyTooLarge = errors.New("httpapi: body over its cap")

// cappedReader passes at most limit bytes, then fails with
// errBodyTooLarge; it remembers why it failed, so a decoder's error can be
// traced back to the body (over the cap, or a transport error).
type cappedReader struct {
	r    io.Reader
	left int64
	over bool
	err  error // the first error of r other than io.EOF
}

func (c *cappedReader) Read(p []byte) (int, error) {
	if c.over {
		return 0, errBodyTooLarge
	}
	if int64(len(p)) > c.left+1 {
		p = p[:c.left+1]
	}
	n, err := c.r.Read(p)
	if int64(n) > c.left {
		c.over = true
		return int(c.left), errBodyTooLarge
	}
	c.left -= int64(n)
	if err != nil && !errors.Is(err, io.EOF) && c.err == nil {
		c.err = err
	}
	return n, err
}

// batchBody is a batch produce body: the raw stream capped as sent, the
// decompressor if any, the decoded stream capped again, and, when the node
// caps batch bodies in flight, the decoded stream's hold on that budget.
type batchBody struct {
	raw      *cappedReader
	encoding string
	decoder  io.Reader
	decoded  *cappedReader
	budget   *budgetReader // nil: no budget
	close    func()
	declared int64 // the declared length of an unencoded body, else 0
}

func (b *batchBody) Read(p []byte) (int, error) {
	if b.budget != nil {
		return b.budget.Read(p)
	}
	return b.decoded.Read(p)
}

// holdBudget makes the body claim budget as it is read (nil: no cap). A
// body declared over the free part claims its first share now and may be
// refused with errBatchBudgetFull before any byte is read.
func (b *batchBody) holdBudget(budget *bodyBudget) error {
	if budget == nil {
		return nil
	}
	br, err := newBudgetReader(b.decoded, budget, b.declared)
	if err != nil {
		return err
	}
	b.budget = br
	return nil
}

// Close releases the decompressor and the body's budget.
func (b *batchBody) Close() {
	if b.close != nil {
		b.close()
	}
	if b.budget != nil {
		b.budget.release()
	}
}

// openBatchBody honours Content-Encoding zstd, gzip or none (identity);
// any other is 415. Both the body as sent and as decoded are capped at
// batchBodyMaxBytes.
func openBatchBody(r *http.Request) (*batchBody, error) {
	values := r.Header.Values("Content-Encoding")
	if len(values) > 1 {
		return nil, clientErr(http.StatusUnsupportedMediaType, msg415Encoding)
	}
	enc := ""
	if len(values) == 1 {
		enc = strings.ToLower(strings.TrimSpace(values[0]))
	}
	b := &batchBody{raw: &cappedReader{r: r.Body, left: batchBodyMaxBytes}, encoding: enc}
	switch enc {
	case "", "identity":
		b.decoder, b.declared = b.raw, r.ContentLength
	case "gzip":
		zr, err := gzip.NewReader(b.raw)
		if err != nil {
			return nil, b.readError(err)
		}
		b.decoder, b.close = zr, func() { _ = zr.Close() }
	case "zstd":
		zr, err := zstd.NewReader(b.raw, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
			zstd.WithDecoderMaxWindow(zstdWindowMaxBytes))
		if err != nil {
			return nil, b.readError(err)
		}
		b.decoder, b.close = zr, zr.Close
	default:
		return nil, clientErr(http.StatusUnsupportedMediaType, msg415Encoding)
	}
	b.decoded = &cappedReader{r: b.decoder, left: batchBodyMaxBytes}
	return b, nil
}

// readError says why reading the body failed: the budget full (503), over
// a cap (413), the read deadline (408), the transport (400), the
// decompressor (400), or nil when the body read fine and the fault is the
// JSON's.
func (b *batchBody) readError(err error) error {
	switch {
	case b.budget != nil && b.budget.refused:
		return errBatchBudgetFull
	case b.raw.over || (b.decoded != nil && b.decoded.over):
		return clientErr(http.StatusRequestEntityTooLarge, msgBodyTooLarge)
	case b.raw.err != nil:
		return bodyReadError(b.raw.err, "read body")
	case b.encoding != "" && b.encoding != "identity" && b.decoded != nil && b.decoded.err != nil:
		return clientErr(http.StatusBadRequest, "invalid %s body: %v", b.encoding, b.decoded.err)
	case b.decoded == nil:
		return clientErr(http.StatusBadRequest, "invalid %s body: %v", b.encoding, err)
	}
	return nil
}

// wireMessage is one element of "messages" as sent.
type wireMessage struct {
	Key             *string         `json:"key"`
	KeyEncoding     *string         `json:"key_encoding"`
	Payload         json.RawMessage `json:"payload"`
	PayloadEncoding *string         `json:"payload_encoding"`
	Partition       *int64          `json:"partition"`
	DelayMs         *int64          `json:"delay_ms"`      // ours: api-extensions.md "Per-message delay"
	DeliverAtMs     *int64          `json:"deliver_at_ms"` // ours
}

// decodeBatch decodes {"messages":[...]} strictly, then checks every
// message's format in order: the first failure is a *produce.MessageError.
// The plain shape clients send is scanned in one pass over the buffered
// body (batchScanner); anything else, and every refusal, is decided by
// encoding/json one element at a time (refusing the 1,001st without reading
// further). Growth is bounded by the body: the scanner buffers it once and
// stops early on what it does not know, the decoder holds one element at a
// time and each message keeps only its own bytes (story F49).
func decodeBatch(body *batchBody) ([]produce.Message, error) {
	sc := newBatchScanner(body, body.declared)
	wire, ok := sc.scan()
	if !ok {
		var err error
		if wire, err = decodeWire(json.NewDecoder(sc.replay())); err != nil {
			if rerr := body.readError(err); rerr != nil {
				return nil, rerr
			}
			return nil, err
		}
	}
	if len(wire) == 0 {
		return nil, clientErr(http.StatusBadRequest, "messages required")
	}
	msgs := make([]produce.Message, len(wire))
	for i, w := range wire {
		var err error
		if msgs[i], err = w.message(); err != nil {
			return nil, &produce.MessageError{Index: i, Err: err}
		}
	}
	return msgs, nil
}

func invalidJSON(err error) error { return clientErr(http.StatusBadRequest, "invalid json: %v", err) }

// decodeWire walks the top-level object; "messages" is its only field.
func decodeWire(dec *json.Decoder) ([]wireMessage, error) {
	dec.DisallowUnknownFields()
	tok, err := dec.Token()
	switch {
	case err != nil:
		return nil, invalidJSON(err)
	case tok == nil:
		return nil, trailing(dec)
	case tok != json.Delim('{'):
		return nil, clientErr(http.StatusBadRequest, "invalid json: json: cannot unmarshal %v into the batch body object", tokenKind(tok))
	}
	var wire []wireMessage
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, invalidJSON(err)
		}
		if name, _ := tok.(string); !strings.EqualFold(name, "messages") {
			return nil, clientErr(http.StatusBadRequest, "invalid json: json: unknown field %q", name)
		}
		if wire, err = decodeMessages(dec); err != nil {
			return nil, err
		}
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, invalidJSON(err)
	}
	return wire, trailing(dec)
}

// trailing refuses anything after the top-level value, after one token.
func trailing(dec *json.Decoder) error {
	_, err := dec.Token()
	switch {
	case errors.Is(err, io.EOF):
		return nil
	case err != nil:
		return invalidJSON(err)
	}
	return clientErr(http.StatusBadRequest, "invalid json: multiple JSON values")
}

// decodeMessages decodes the messages array element by element.
func decodeMessages(dec *json.Decoder) ([]wireMessage, error) {
	tok, err := dec.Token()
	switch {
	case err != nil:
		return nil, invalidJSON(err)
	case tok == nil:
		return nil, nil
	case tok != json.Delim('['):
		return nil, clientErr(http.StatusBadRequest, "invalid json: json: cannot unmarshal %v into the messages array", tokenKind(tok))
	}
	var wire []wireMessage
	for dec.More() {
		if len(wire) == produce.BatchMaxMessages {
			return nil, clientErr(http.StatusBadRequest, "too many messages: %d (max %d)", len(wire)+1, produce.BatchMaxMessages)
		}
		var w wireMessage
		if err := dec.Decode(&w); err != nil {
			return nil, invalidJSON(err)
		}
		wire = append(wire, w)
	}
	if _, err := dec.Token(); err != nil { // the closing bracket
		return nil, invalidJSON(err)
	}
	return wire, nil
}

func tokenKind(tok json.Token) string {
	switch tok.(type) {
	case json.Delim:
		return fmt.Sprintf("%q", tok)
	case string:
		return "string"
	case bool:
		return "bool"
	}
	return "number"
}

// message checks one element's format and decodes its encodings, in the
// order of api.md §2.13.1's table.
func (w wireMessage) message() (produce.Message, error) {
	var m produce.Message
	if !validEncoding(w.KeyEncoding) {
		return m, clientErr(http.StatusBadRequest, `invalid key_encoding: want "base64" or none`)
	}
	if !validEncoding(w.PayloadEncoding) {
		return m, clientErr(http.StatusBadRequest, `invalid payload_encoding: want "base64" or none`)
	}
	var err error
	if m.Key, err = w.key(); err != nil {
		return m, err
	}
	if m.Payload, err = w.payload(); err != nil {
		return m, err
	}
	switch {
	case len(m.Payload) == 0:
		return m, domain.ErrEmptyMessage
	case len(m.Payload) > produce.MessageMaxBytes:
		return m, fmt.Errorf("httpapi: payload of %d bytes: %w", len(m.Payload), domain.ErrRecordTooLarge)
	}
	if w.Partition != nil {
		if *w.Partition < 0 {
			return m, clientErr(http.StatusBadRequest, "invalid partition: must be >= 0")
		}
		p := int32(min(*w.Partition, math.MaxInt32))
		m.Partition = &p
	}
	m.DelayMs, m.DeliverAtMs = w.DelayMs, w.DeliverAtMs
	return m, produce.CheckSchedule(m)
}

func validEncoding(enc *string) bool { return enc == nil || *enc == "base64" }

func (w wireMessage) key() ([]byte, error) {
	if w.Key == nil || *w.Key == "" {
		return nil, nil
	}
	if w.KeyEncoding == nil {
		return []byte(*w.Key), nil
	}
	k, err := base64.StdEncoding.DecodeString(*w.Key)
	if err != nil {
		return nil, clientErr(http.StatusBadRequest, "invalid key: %v", err)
	}
	return k, nil
}

// payload is the payload's bytes as sent, or its base64 decoding.
func (w wireMessage) payload() ([]byte, error) {
	if w.PayloadEncoding == nil || len(w.Payload) == 0 {
		return w.Payload, nil
	}
	if w.Payload[0] != '"' {
		return nil, clientErr(http.StatusBadRequest, "invalid payload: a base64 payload must be a JSON string")
	}
	var s string
	if err := json.Unmarshal(w.Payload, &s); err != nil {
		return nil, clientErr(http.StatusBadRequest, "invalid payload: %v", err)
	}
	p, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, clientErr(http.StatusBadRequest, "invalid payload: %v", err)
	}
	return p, nil
}
