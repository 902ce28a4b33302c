package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/narad/narad/adapters/httpclient"
	"github.com/narad/narad/domain"
)

// fakeBroker is a small in-memory broker speaking the v3 wire (api.md §2):
// topics, produce, batch produce, consume (queue, pinned, batch, replay) and
// acks (single and batch). Leases never expire.
type fakeBroker struct {
	t        *testing.T
	srv      *httptest.Server
	conns    atomic.Int64
	mu       sync.Mutex
	topics   map[string]*fakeTopic
	pageSize int
	user     string // when set, Basic auth with user:pass is required
	pass     string
	dropNth  int   // the dropNth accepted message (1-based) gets its 202 but is never stored
	ackPlan  []int // statuses for the next single acks: 502 applies the ack first, 503 does not
	accepted int
	nonce    uint64
	wake     chan struct{}
	reqs     []seenRequest
	// onReplay, when set, runs (under the lock) before each replay read.
	onReplay func(ft *fakeTopic, partition int, offset int64)
	// onConsume, when set, runs before each queue, pinned or batch consume.
	onConsume func()
}

// seenRequest is one request as the fake received it.
type seenRequest struct {
	line   string // "METHOD /path?query"
	header http.Header
	body   string
}

type fakeTopic struct {
	meta    httpclient.Topic
	parts   []*fakePartition
	schemas []json.RawMessage
	rr      int
}

type fakePartition struct {
	records []domain.Record
	oldest  int64            // offsets below it have aged out
	leases  map[int64]uint64 // offset -> nonce
	acked   map[int64]bool
	down    bool
	owner   string
}

func newFakeBroker(t *testing.T) *fakeBroker {
	b := &fakeBroker{t: t, topics: map[string]*fakeTopic{}, pageSize: 2, wake: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/topics", b.create)
	mux.HandleFunc("GET /v1/topics", b.list)
	mux.HandleFunc("GET /v1/topics/{topic}", b.withTopic(b.describe))
	mux.HandleFunc("PATCH /v1/topics/{topic}", b.withTopic(b.alter))
	mux.HandleFunc("DELETE /v1/topics/{topic}", b.withTopic(b.remove))
	mux.HandleFunc("GET /v1/topics/{topic}/schema", b.withTopic(b.schema))
	mux.HandleFunc("POST /v1/topics/{topic}/produce", b.withTopic(b.produce))
	mux.HandleFunc("POST /v1/topics/{topic}/produce/batch", b.withTopic(b.produceBatch))
	mux.HandleFunc("GET /v1/topics/{topic}/consume", b.consume)
	mux.HandleFunc("POST /v1/topics/{topic}/ack", b.withTopic(b.ack))
	b.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		b.mu.Lock()
		b.reqs = append(b.reqs, seenRequest{line: r.Method + " " + r.URL.RequestURI(), header: r.Header.Clone(), body: string(body)})
		b.mu.Unlock()
		if u, p, ok := r.BasicAuth(); b.user != "" && (!ok || u != b.user || p != b.pass) {
			w.Header().Set("WWW-Authenticate", `Basic realm="narad"`)
			writeErr(w, 401, "unauthorized")
			return
		}
		if (r.Method == http.MethodPost || r.Method == http.MethodPatch) && r.Header.Get("X-Narad-Client") == "" {
			writeErr(w, 415, "state-changing requests must send Content-Type: application/json or application/octet-stream, or an X-Narad-Client header")
			return
		}
		mux.ServeHTTP(w, r)
	}))
	b.srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			b.conns.Add(1)
		}
	}
	b.srv.Start()
	t.Cleanup(b.srv.Close)
	return b
}

// connections counts the TCP connections the broker accepted.
func (b *fakeBroker) connections() int { return int(b.conns.Load()) }

func (b *fakeBroker) url() string { return b.srv.URL }

// requests returns every request so far.
func (b *fakeBroker) requests() []seenRequest {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.reqs)
}

// lines returns "METHOD /path?query" of the requests whose line starts with prefix.
func (b *fakeBroker) lines(prefix string) []string {
	var out []string
	for _, r := range b.requests() {
		if strings.HasPrefix(r.line, prefix) {
			out = append(out, r.line)
		}
	}
	return out
}

// ackedCount returns how many messages of the topic are acked, and how many leased.
func (b *fakeBroker) ackedCount(topic string) (acked, leased int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, p := range b.topics[topic].parts {
		acked += len(p.acked)
		leased += len(p.leases)
	}
	return acked, leased
}

// addTopic creates a topic directly, with records per partition.
func (b *fakeBroker) addTopic(name string, partitions int, records ...[]string) *fakeTopic {
	b.mu.Lock()
	defer b.mu.Unlock()
	ft := &fakeTopic{meta: httpclient.Topic{Name: name, ID: "0123456789abcdef", Partitions: partitions, RetentionMs: 604800000, VisibilityTimeoutMs: 30000, MaxInFlightPerPartition: 1024, MaxAckedAheadPerPartition: 1024, CreatedAt: 1783615560, Role: "standalone"}}
	for p := range partitions {
		fp := &fakePartition{leases: map[int64]uint64{}, acked: map[int64]bool{}, owner: fmt.Sprintf("n%d", p%3+1)}
		if p < len(records) {
			for _, s := range records[p] {
				fp.records = append(fp.records, domain.Record{Offset: int64(len(fp.records)), Payload: []byte(s), CommittedAtMs: 1783615560000})
			}
		}
		ft.parts = append(ft.parts, fp)
	}
	b.topics[name] = ft
	return ft
}

// put appends a record with a key to one partition.
func (b *fakeBroker) put(topic string, p int, key, payload []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	part := b.topics[topic].parts[p]
	part.records = append(part.records, domain.Record{Offset: int64(len(part.records)), Key: key, Payload: payload, CommittedAtMs: 1783615560000})
}

func writeErr(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]string{"error": msg})
	_, _ = w.Write(append(b, '\n'))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(v)
	_, _ = w.Write(append(b, '\n'))
}

// decodeStrict decodes a body the way the server does (api.md §0.2).
func decodeStrict(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		writeErr(w, 400, "invalid json: "+err.Error())
		return false
	}
	return true
}

// withTopic looks the topic up under the lock and calls h with it held.
func (b *fakeBroker) withTopic(h func(http.ResponseWriter, *http.Request, *fakeTopic)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		b.mu.Lock()
		defer b.mu.Unlock()
		ft, ok := b.topics[r.PathValue("topic")]
		if !ok {
			writeErr(w, 404, "topic not found")
			return
		}
		h(w, r, ft)
	}
}

func (b *fakeBroker) create(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Name                      string          `json:"name"`
		Partitions                int             `json:"partitions"`
		RetentionMs               *int64          `json:"retention_ms"`
		VisibilityTimeoutMs       int64           `json:"visibility_timeout_ms"`
		MaxInFlightPerPartition   int64           `json:"max_in_flight_per_partition"`
		MaxAckedAheadPerPartition int64           `json:"max_acked_ahead_per_partition"`
		Schema                    json.RawMessage `json:"schema"`
		Parent                    string          `json:"parent"`
		FanoutDelayMs             int64           `json:"fanout_delay_ms"`
		Redelivery                json.RawMessage `json:"redelivery"`
		DeadLetter                json.RawMessage `json:"dead_letter"`
	}
	if !decodeStrict(w, r, &req) {
		return
	}
	if req.Partitions == 0 {
		req.Partitions = 3
	}
	switch {
	case req.Name == "":
		writeErr(w, 400, "invalid argument: name required")
		return
	case req.Partitions < 3:
		writeErr(w, 400, "invalid argument: partitions must be >= 3 (0 = use default)")
		return
	}
	b.mu.Lock()
	_, exists := b.topics[req.Name]
	b.mu.Unlock()
	if exists {
		writeErr(w, 409, "topic already exists")
		return
	}
	ft := b.addTopic(req.Name, req.Partitions)
	b.mu.Lock()
	defer b.mu.Unlock()
	if req.RetentionMs != nil {
		ft.meta.RetentionMs = *req.RetentionMs
	}
	if req.VisibilityTimeoutMs > 0 {
		ft.meta.VisibilityTimeoutMs = req.VisibilityTimeoutMs
	}
	ft.meta.Parent, ft.meta.FanoutDelayMs, ft.meta.Redelivery = req.Parent, req.FanoutDelayMs, req.Redelivery
	ft.meta.DeadLetter = req.DeadLetter
	if len(req.Schema) > 0 {
		ft.schemas = append(ft.schemas, req.Schema)
	}
	writeJSON(w, 201, ft.meta)
}

func (b *fakeBroker) list(w http.ResponseWriter, r *http.Request) {
	b.mu.Lock()
	defer b.mu.Unlock()
	names := make([]string, 0, len(b.topics))
	for n := range b.topics {
		names = append(names, n)
	}
	slices.Sort(names)
	tok := r.URL.Query().Get("page_token")
	page := []httpclient.Topic{}
	next := ""
	for i, n := range names {
		if n <= tok {
			continue
		}
		if len(page) == b.pageSize {
			next = names[i-1]
			break
		}
		page = append(page, b.topics[n].meta)
	}
	writeJSON(w, 200, map[string]any{"topics": page, "next_page_token": next})
}

func (b *fakeBroker) describe(w http.ResponseWriter, _ *http.Request, ft *fakeTopic) {
	t := ft.meta
	t.SchemaVersion = len(ft.schemas)
	if len(ft.schemas) > 0 {
		t.Schema = ft.schemas[len(ft.schemas)-1]
	}
	t.PartitionStats = []httpclient.PartitionStats{}
	for i, p := range ft.parts {
		if p.down {
			t.Partial = true
			t.PartitionStats = append(t.PartitionStats, httpclient.PartitionStats{Index: i, OwnerNode: p.owner, Status: httpclient.StatusOwnerUnavailable, OwnerLiveness: "dead"})
			continue
		}
		size := int64(0)
		for _, rec := range p.records {
			size += int64(len(rec.Payload))
		}
		hwm := int64(len(p.records))
		t.PartitionStats = append(t.PartitionStats, httpclient.PartitionStats{Index: i, Segments: 1, OldestOffset: p.oldest, NextOffset: hwm, HighWatermark: hwm, SizeBytes: size, OwnerNode: p.owner, Status: "ok"})
	}
	writeJSON(w, 200, t)
}

func (b *fakeBroker) alter(w http.ResponseWriter, r *http.Request, ft *fakeTopic) {
	var req struct {
		RetentionMs       *int64          `json:"retention_ms"`
		Partitions        int             `json:"partitions"`
		Schema            json.RawMessage `json:"schema"`
		SchemaBaseVersion int             `json:"schema_base_version"`
		MaxInFlight       *int64          `json:"max_in_flight_per_partition"`
		MaxAckedAhead     *int64          `json:"max_acked_ahead_per_partition"`
		Redelivery        json.RawMessage `json:"redelivery"`
		DeadLetter        json.RawMessage `json:"dead_letter"`
	}
	if !decodeStrict(w, r, &req) {
		return
	}
	if string(req.Redelivery) == "null" {
		ft.meta.Redelivery = nil
	} else if req.Redelivery != nil {
		ft.meta.Redelivery = req.Redelivery
	}
	if string(req.DeadLetter) == "null" {
		ft.meta.DeadLetter = nil
	} else if req.DeadLetter != nil {
		ft.meta.DeadLetter = req.DeadLetter
	}
	if req.SchemaBaseVersion != 0 && req.SchemaBaseVersion != len(ft.schemas) {
		writeErr(w, 409, "schema version conflict")
		return
	}
	if req.RetentionMs != nil {
		ft.meta.RetentionMs = *req.RetentionMs
	}
	if req.MaxInFlight != nil {
		ft.meta.MaxInFlightPerPartition = *req.MaxInFlight
	}
	if req.MaxAckedAhead != nil {
		ft.meta.MaxAckedAheadPerPartition = *req.MaxAckedAhead
	}
	for len(ft.parts) < req.Partitions {
		ft.parts = append(ft.parts, &fakePartition{leases: map[int64]uint64{}, acked: map[int64]bool{}})
	}
	ft.meta.Partitions = len(ft.parts)
	if len(req.Schema) > 0 {
		ft.schemas = append(ft.schemas, req.Schema)
	}
	writeJSON(w, 200, ft.meta)
}

func (b *fakeBroker) remove(w http.ResponseWriter, _ *http.Request, ft *fakeTopic) {
	delete(b.topics, ft.meta.Name)
	w.WriteHeader(204)
}

func (b *fakeBroker) schema(w http.ResponseWriter, _ *http.Request, ft *fakeTopic) {
	versions := []map[string]any{}
	for i, s := range ft.schemas {
		versions = append(versions, map[string]any{"version": i + 1, "schema": s})
	}
	writeJSON(w, 200, map[string]any{"topic": ft.meta.Name, "version": len(ft.schemas), "versions": versions})
}

// store appends one accepted message (unless it is the one to drop) and wakes long polls.
func (b *fakeBroker) store(ft *fakeTopic, key, payload []byte, pin *int) {
	b.accepted++
	if b.accepted == b.dropNth {
		return
	}
	p := ft.rr % len(ft.parts)
	ft.rr++
	switch {
	case pin != nil:
		p = *pin
	case len(key) > 0:
		p = int(domain.KeyPartition(key, len(ft.parts)))
	}
	part := ft.parts[p]
	part.records = append(part.records, domain.Record{Offset: int64(len(part.records)), Key: key, Payload: payload, CommittedAtMs: time.Now().UnixMilli()})
	close(b.wake)
	b.wake = make(chan struct{})
}

func (b *fakeBroker) produce(w http.ResponseWriter, r *http.Request, ft *fakeTopic) {
	body, _ := io.ReadAll(r.Body)
	if len(body) == 0 {
		writeErr(w, 400, "message required")
		return
	}
	var pin *int
	if s := r.URL.Query().Get("partition"); s != "" {
		p, err := strconv.Atoi(s)
		if err != nil || p < 0 || p >= len(ft.parts) {
			writeErr(w, 400, "invalid argument: partition out of range")
			return
		}
		pin = &p
	}
	b.store(ft, []byte(r.URL.Query().Get("key")), body, pin)
	w.WriteHeader(202)
}

func (b *fakeBroker) produceBatch(w http.ResponseWriter, r *http.Request, ft *fakeTopic) {
	var req struct {
		Messages []struct {
			Key             string          `json:"key"`
			KeyEncoding     string          `json:"key_encoding"`
			Payload         json.RawMessage `json:"payload"`
			PayloadEncoding string          `json:"payload_encoding"`
			Partition       *int            `json:"partition"`
		} `json:"messages"`
	}
	if !decodeStrict(w, r, &req) {
		return
	}
	if len(req.Messages) == 0 {
		writeErr(w, 400, "messages required")
		return
	}
	type decoded struct{ key, payload []byte }
	var out []decoded
	for i, m := range req.Messages {
		d := decoded{key: []byte(m.Key), payload: m.Payload}
		var err error
		if m.KeyEncoding == "base64" {
			d.key, err = base64.StdEncoding.DecodeString(m.Key)
		}
		if m.PayloadEncoding == "base64" && err == nil {
			var s string
			if err = json.Unmarshal(m.Payload, &s); err == nil {
				d.payload, err = base64.StdEncoding.DecodeString(s)
			}
		}
		if err != nil || len(d.payload) == 0 {
			writeErr(w, 400, fmt.Sprintf("message %d: invalid payload", i))
			return
		}
		out = append(out, d)
	}
	for i, d := range out {
		b.store(ft, d.key, d.payload, req.Messages[i].Partition)
	}
	writeJSON(w, 202, map[string]int{"accepted": len(out)})
}

// reserve leases up to max available messages, scanning partitions from a
// rotating start, and returns the answer body: one envelope, or the batch
// wrapper when batch is set; nil when nothing is available.
func (b *fakeBroker) reserve(ft *fakeTopic, pin *int, limit int, batch bool) []byte {
	var envs [][]byte
	for i := range ft.parts {
		p := (ft.rr + i) % len(ft.parts)
		if pin != nil && p != *pin {
			continue
		}
		part := ft.parts[p]
		for off := part.oldest; off < int64(len(part.records)) && len(envs) < limit; off++ {
			if _, leased := part.leases[off]; leased || part.acked[off] {
				continue
			}
			b.nonce++
			part.leases[off] = b.nonce
			h := domain.ReceiptHandle{Partition: int32(p), Offset: off, Nonce: b.nonce}
			envs = append(envs, domain.AppendEnvelope(nil, domain.Delivery{Topic: ft.meta.Name, Partition: int32(p), Record: part.records[off], Handle: &h}))
		}
	}
	ft.rr++
	switch {
	case len(envs) == 0:
		return nil
	case !batch:
		return envs[0]
	}
	return append(append([]byte(`{"messages":[`), bytes.Join(envs, []byte(","))...), ']', '}')
}

func (b *fakeBroker) consume(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	wait, _ := time.ParseDuration(q.Get("wait"))
	limit, batch := 1, q.Has("max")
	if batch {
		limit, _ = strconv.Atoi(q.Get("max"))
		if r.Header.Get("X-Narad-Client") == "" || limit < 1 || limit > 100 {
			writeErr(w, 400, "invalid max")
			return
		}
	}
	var pin *int
	if s := q.Get("partition"); s != "" {
		p, _ := strconv.Atoi(s)
		pin = &p
	}
	if wait > 10*time.Second {
		wait = 10 * time.Second
		w.Header().Set("X-Narad-Wait-Clamped", wait.String())
	}
	if b.onConsume != nil && !q.Has("offset") {
		b.onConsume()
	}
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	for {
		b.mu.Lock()
		ft, ok := b.topics[r.PathValue("topic")]
		if !ok {
			b.mu.Unlock()
			writeErr(w, 404, "topic not found")
			return
		}
		if pin != nil && (*pin >= len(ft.parts) || ft.parts[*pin].down) {
			b.mu.Unlock()
			w.WriteHeader(503)
			_, _ = io.WriteString(w, "partition owner is down; retry later")
			return
		}
		if q.Has("offset") {
			b.replay(w, ft, *pin, q.Get("offset"))
			b.mu.Unlock()
			return
		}
		body := b.reserve(ft, pin, limit, batch)
		wake := b.wake
		b.mu.Unlock()
		if body != nil {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(append(body, '\n'))
			return
		}
		select {
		case <-wake:
		case <-deadline.C:
			w.WriteHeader(204)
			return
		case <-r.Context().Done():
			return
		}
	}
}

func (b *fakeBroker) replay(w http.ResponseWriter, ft *fakeTopic, p int, offset string) {
	off, err := strconv.ParseInt(offset, 10, 64)
	if b.onReplay != nil && err == nil {
		b.onReplay(ft, p, off)
	}
	part := ft.parts[p]
	switch {
	case err != nil || off < 0:
		writeErr(w, 400, "invalid offset: must be >= 0")
	case off >= int64(len(part.records)):
		w.WriteHeader(204)
	case off < part.oldest:
		writeErr(w, 410, fmt.Sprintf("receipt handle no longer matches an active reservation: offset %d aged out of retention (oldest retained: %d)", off, part.oldest))
	default:
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(append(domain.AppendEnvelope(nil, domain.Delivery{Topic: ft.meta.Name, Partition: int32(p), Record: part.records[off]}), '\n'))
	}
}

// settle applies op to one handle and returns the single form's status.
func (b *fakeBroker) settle(ft *fakeTopic, handle, extend string) (int, string) {
	h, err := domain.ParseReceiptHandle(handle)
	if err != nil {
		return 400, "receipt handle is malformed"
	}
	if int(h.Partition) >= len(ft.parts) || ft.parts[h.Partition].leases[h.Offset] != h.Nonce {
		return 410, "receipt handle no longer matches an active reservation"
	}
	part := ft.parts[h.Partition]
	switch extend {
	case "true", "1":
	case "0":
		delete(part.leases, h.Offset)
		close(b.wake)
		b.wake = make(chan struct{})
	default:
		delete(part.leases, h.Offset)
		part.acked[h.Offset] = true
	}
	return 204, ""
}

func (b *fakeBroker) ack(w http.ResponseWriter, r *http.Request, ft *fakeTopic) {
	q := r.URL.Query()
	if h := q.Get("receipt_handle"); h != "" {
		if len(b.ackPlan) > 0 {
			st := b.ackPlan[0]
			b.ackPlan = b.ackPlan[1:]
			switch st {
			case 410:
				writeErr(w, 410, "receipt handle no longer matches an active reservation")
			case 502:
				b.settle(ft, h, q.Get("extend"))
				w.WriteHeader(502)
				_, _ = io.WriteString(w, "the partition owner did not answer; the ack may have been applied; retry")
			default:
				w.WriteHeader(st)
				_, _ = io.WriteString(w, "the ack did not reach the partition owner and was not applied; retry")
			}
			return
		}
		if st, msg := b.settle(ft, h, q.Get("extend")); st != 204 {
			writeErr(w, st, msg)
			return
		}
		w.WriteHeader(204)
		return
	}
	var req struct {
		ReceiptHandles []string `json:"receipt_handles"`
	}
	if !decodeStrict(w, r, &req) {
		return
	}
	if len(req.ReceiptHandles) == 0 {
		writeErr(w, 400, "receipt_handles required")
		return
	}
	results := []map[string]any{}
	for _, h := range req.ReceiptHandles {
		st, msg := b.settle(ft, h, q.Get("extend"))
		res := map[string]any{"status": st}
		if msg != "" {
			res["error"] = msg
		}
		results = append(results, res)
	}
	writeJSON(w, 200, map[string]any{"results": results})
}
