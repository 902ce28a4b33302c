package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"
	"go.uber.org/zap"

	"github.com/narad/narad/application/remotes"
	"github.com/narad/narad/application/topics"
	"github.com/narad/narad/domain/meta"
)

// topicBodyMaxBytes caps a create or alter body (api.md §0.2).
const topicBodyMaxBytes = 1 << 20

// TopicRoutes serves routes 4-9 of the route table (api.md §1, §2.4-2.9.1).
// The caller's grants and ownership are judged by the use case on the
// records it reads; owner is the authenticated creator (a client-supplied
// owner is ignored).
func TopicRoutes(svc *topics.Service, rem *remotes.Service, log *zap.Logger) []Route {
	h := &topicHandlers{svc: svc, rem: rem, log: log}
	return []Route{
		{Method: http.MethodPost, Path: "/v1/topics", Handle: h.create},
		{Method: http.MethodGet, Path: "/v1/topics", Handle: h.list},
		{Method: http.MethodGet, Path: "/v1/topics/:topic", Handle: h.describe},
		{Method: http.MethodPatch, Path: "/v1/topics/:topic", Handle: h.alter},
		{Method: http.MethodDelete, Path: "/v1/topics/:topic", Handle: h.delete},
		{Method: http.MethodGet, Path: "/v1/topics/:topic/schema", Handle: h.schema},
		{Method: http.MethodPost, Path: "/v1/topics/:topic/children", Handle: h.attach},
		{Method: http.MethodGet, Path: "/v1/topics/:topic/children", Handle: h.listChildren},
		{Method: http.MethodDelete, Path: "/v1/topics/:topic/children/:child", Handle: h.detach},
		{Method: http.MethodPost, Path: "/v1/topics/:topic/redrive", Handle: h.startRedrive},
		{Method: http.MethodGet, Path: "/v1/topics/:topic/redrive", Handle: h.redrive},
		{Method: http.MethodDelete, Path: "/v1/topics/:topic/redrive", Handle: h.cancelRedrive},
	}
}

type topicHandlers struct {
	svc *topics.Service
	rem *remotes.Service // nil: no remote plane (remote children answer 501)
	log *zap.Logger
}

// topicCreateBody is the create request (api.md §2.5). Owner is accepted
// and ignored.
type topicCreateBody struct {
	Name          string          `json:"name"`
	Partitions    int64           `json:"partitions"`
	RetentionMs   *int64          `json:"retention_ms"`
	VisibilityMs  int64           `json:"visibility_timeout_ms"`
	MaxInFlight   int64           `json:"max_in_flight_per_partition"`
	MaxAckedAhead int64           `json:"max_acked_ahead_per_partition"`
	Schema        json.RawMessage `json:"schema"`
	Parent        string          `json:"parent"`
	FanoutDelayMs int64           `json:"fanout_delay_ms"`
	Owner         string          `json:"owner"`
	Redelivery    *redeliveryJSON `json:"redelivery"`
	DeadLetter    *deadLetterJSON `json:"dead_letter"`
}

// topicAlterBody is the alter request (api.md §2.8); visibility_timeout_ms
// is deliberately unknown.
type topicAlterBody struct {
	RetentionMs       *int64          `json:"retention_ms"`
	MaxInFlight       *int64          `json:"max_in_flight_per_partition"`
	MaxAckedAhead     *int64          `json:"max_acked_ahead_per_partition"`
	Partitions        *int64          `json:"partitions"`
	Schema            json.RawMessage `json:"schema"`
	SchemaBaseVersion *int64          `json:"schema_base_version"`
	Redelivery        json.RawMessage `json:"redelivery"`
	DeadLetter        json.RawMessage `json:"dead_letter"`
}

// Answers to a topic body over 1 MiB (api.md §0.2): 413 for a create or
// alter, 400 for an attach.
var (
	errTopicBodyTooLarge  = clientErr(http.StatusRequestEntityTooLarge, msgBodyTooLarge)
	errAttachBodyTooLarge = clientErr(http.StatusBadRequest, "invalid json: http: request body too large")
)

// decodeTopicBody reads at most 1 MiB (more is a 413) and decodes exactly
// one JSON value with no unknown field (api.md §0.2).
func decodeTopicBody(r io.Reader, v any) error {
	return decodeCappedBody(r, v, errTopicBodyTooLarge)
}

// decodeCappedBody reads at most topicBodyMaxBytes, answering tooLarge past
// it (408 when the body stops arriving before the read deadline), and
// decodes exactly one JSON value with no unknown field.
func decodeCappedBody(r io.Reader, v any, tooLarge error) error {
	body, err := io.ReadAll(io.LimitReader(r, topicBodyMaxBytes+1))
	if err != nil {
		return bodyReadError(err, "invalid json")
	}
	if len(body) > topicBodyMaxBytes {
		return tooLarge
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return clientErr(http.StatusBadRequest, "invalid json: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return clientErr(http.StatusBadRequest, "invalid json: multiple JSON values")
	}
	return nil
}

func (h *topicHandlers) create(c *gin.Context) {
	var b topicCreateBody
	if err := decodeTopicBody(c.Request.Body, &b); err != nil {
		respondError(c, h.log, err)
		return
	}
	req := topics.CreateRequest{
		Caller: principalOf(c), Name: b.Name, Partitions: b.Partitions, RetentionMs: b.RetentionMs, VisibilityMs: b.VisibilityMs,
		MaxInFlight: b.MaxInFlight, MaxAckedAhead: b.MaxAckedAhead, Parent: b.Parent, FanoutDelayMs: b.FanoutDelayMs,
		Redelivery: b.Redelivery.request(), DeadLetter: b.DeadLetter.request(),
	}
	if len(b.Schema) > 0 && string(b.Schema) != "null" {
		req.Schema = b.Schema
	}
	got, err := h.svc.Create(c.Request.Context(), req)
	if err != nil {
		respondError(c, h.log, err)
		return
	}
	h.warn("placement deferred", got.Topic.Name, got.PlacementErr)
	view := topicView(got.Topic)
	if got.Topic.Role() == meta.RoleStandalone {
		view.Role = "" // the create answer omits a standalone role (api.md §2.4)
	}
	respondJSON(c, http.StatusCreated, view)
}

func (h *topicHandlers) list(c *gin.Context) {
	q, err := parseQuery(c.Request.URL.RawQuery)
	if err != nil {
		respondError(c, h.log, err)
		return
	}
	limit, token, err := listParams(q)
	if err != nil {
		respondError(c, h.log, err)
		return
	}
	page, err := h.svc.List(c.Request.Context(), principalOf(c), token, limit)
	if err != nil {
		if status, _ := statusOf(err); status >= http.StatusInternalServerError && status != http.StatusServiceUnavailable {
			h.log.Error("list topics failed", zap.Error(err))
			writeError(c, http.StatusInternalServerError, "list topics failed")
			return
		}
		respondError(c, h.log, err)
		return
	}
	out := topicListJSON{Topics: make([]topicJSON, 0, len(page.Topics)), NextPageToken: page.Next}
	for _, t := range page.Topics {
		out.Topics = append(out.Topics, topicView(t))
	}
	respondJSON(c, http.StatusOK, out)
}

// listParams parses limit (a positive integer) and page_token.
func listParams(q query) (limit int, token string, err error) {
	raw, ok, err := q.first("limit")
	if err != nil {
		return 0, "", clientErr(http.StatusBadRequest, "limit must be a positive integer")
	}
	if ok {
		n, convErr := strconv.Atoi(raw)
		if convErr != nil || n < 1 {
			return 0, "", clientErr(http.StatusBadRequest, "limit must be a positive integer")
		}
		limit = n
	}
	token, _, err = q.first("page_token")
	return limit, token, err
}

func (h *topicHandlers) describe(c *gin.Context) {
	req := topics.DescribeRequest{Caller: principalOf(c), Name: c.Param("topic")}
	q, err := parseQuery(c.Request.URL.RawQuery)
	if err == nil {
		req.Partition, req.HasPartition, err = partitionParam(q)
	}
	if err != nil {
		respondError(c, h.log, err)
		return
	}
	d, err := h.svc.Describe(c.Request.Context(), req)
	if err != nil {
		respondError(c, h.log, err)
		return
	}
	out := describeView(d)
	if req.Caller.Admin() && req.Caller.Secured() {
		out.Remote = remoteLinkView(d.Topic.Remote, true) // paused_by and created_by are for admins
	}
	respondJSON(c, http.StatusOK, out)
}

// partitionParam parses describe's optional partition (api.md §2.7).
func partitionParam(q query) (int32, bool, error) {
	raw, ok, err := q.first("partition")
	if err != nil || !ok {
		return 0, false, err
	}
	n, err := strconv.ParseInt(raw, 10, 32)
	if err != nil || n < 0 {
		return 0, false, clientErr(http.StatusBadRequest, "invalid partition")
	}
	return int32(n), true, nil
}

func (h *topicHandlers) alter(c *gin.Context) {
	var b topicAlterBody
	if err := decodeTopicBody(c.Request.Body, &b); err != nil {
		respondError(c, h.log, err)
		return
	}
	req := topics.AlterRequest{
		Caller: principalOf(c), Name: c.Param("topic"), RetentionMs: b.RetentionMs, MaxInFlight: b.MaxInFlight,
		MaxAckedAhead: b.MaxAckedAhead, Partitions: b.Partitions, SchemaBaseVersion: b.SchemaBaseVersion,
	}
	if b.Schema != nil {
		req.Schema = b.Schema
	}
	if err := alterRedelivery(b.Redelivery, &req); err != nil {
		respondError(c, h.log, err)
		return
	}
	if err := alterDeadLetter(b.DeadLetter, &req); err != nil {
		respondError(c, h.log, err)
		return
	}
	got, err := h.svc.Alter(c.Request.Context(), req)
	if err != nil {
		respondError(c, h.log, err)
		return
	}
	h.warn("placement deferred", got.Topic.Name, got.PlacementErr)
	respondJSON(c, http.StatusOK, topicView(got.Topic))
}

func (h *topicHandlers) delete(c *gin.Context) {
	force, err := parseBoolParam(c.Request.URL.RawQuery, "force")
	if err != nil {
		respondError(c, h.log, err)
		return
	}
	if !h.unshippedClear(c, c.Param("topic"), force) {
		return
	}
	got, err := h.svc.Delete(c.Request.Context(), principalOf(c), c.Param("topic"))
	if err != nil {
		respondError(c, h.log, err)
		return
	}
	h.warn("purge deferred", got.Topic.Name, got.PurgeErr)
	c.Status(http.StatusNoContent)
}

// flagParam checks that the optional flag name is true or false (any other
// value is a 400).
func flagParam(q query, name string) error {
	raw, ok, err := q.first(name)
	if err != nil || !ok {
		return err
	}
	if raw != "true" && raw != "false" {
		return clientErr(http.StatusBadRequest, "invalid %s: must be true or false", name)
	}
	return nil
}

func (h *topicHandlers) schema(c *gin.Context) {
	hist, err := h.svc.SchemaHistory(c.Request.Context(), principalOf(c), c.Param("topic"))
	if err != nil {
		respondError(c, h.log, err)
		return
	}
	out := schemaHistoryJSON{Topic: hist.Topic, Version: hist.Version, Versions: make([]schemaVersionJSON, 0, len(hist.Versions))}
	for _, v := range hist.Versions {
		out.Versions = append(out.Versions, schemaVersionJSON{Version: v.Version, Schema: v.Schema})
	}
	respondJSON(c, http.StatusOK, out)
}

// warn logs a deferred follow-up of a change that itself succeeded.
func (h *topicHandlers) warn(what, topic string, err error) {
	if err != nil {
		h.log.Warn(what, zap.String("topic", topic), zap.Error(err))
	}
}

// topicJSON is the topic object (api.md §2.4).
type topicJSON struct {
	Name                string   `json:"name"`
	ID                  string   `json:"id,omitempty"`
	Partitions          int32    `json:"partitions"`
	RetentionMs         int64    `json:"retention_ms"`
	VisibilityTimeoutMs int64    `json:"visibility_timeout_ms"`
	MaxInFlight         int64    `json:"max_in_flight_per_partition"`
	MaxAckedAhead       int64    `json:"max_acked_ahead_per_partition"`
	CreatedAt           int64    `json:"created_at"`
	Owner               string   `json:"owner,omitempty"`
	Role                string   `json:"role,omitempty"`
	Children            []string `json:"children,omitempty"`
	Parent              string   `json:"parent,omitempty"`
	AttachEpoch         string   `json:"attach_epoch,omitempty"`
	FanoutDelayMs       int64    `json:"fanout_delay_ms,omitempty"`
	AttachOffsets       []int64  `json:"attach_offsets,omitempty"`
	// Remote is a remote child's link (api.md §2.10.2).
	Remote *remoteLinkJSON `json:"remote,omitempty"`
	// Redelivery is the topic's redelivery backoff (our extension).
	Redelivery *redeliveryJSON `json:"redelivery,omitempty"`
	// DeadLetter is the topic's dead-letter policy (our extension).
	DeadLetter *deadLetterJSON `json:"dead_letter,omitempty"`
	// Redrive is the topic's last redrive job (our extension).
	Redrive *redriveJSON `json:"redrive,omitempty"`
}

// topicDescribeJSON adds what only describe returns (api.md §2.7).
type topicDescribeJSON struct {
	topicJSON
	SchemaVersion  int32                `json:"schema_version"`
	Schema         json.RawMessage      `json:"schema,omitempty"`
	PartitionStats []partitionStatsJSON `json:"partition_stats"`
	Partial        bool                 `json:"partial,omitempty"`
}

// partitionStatsJSON is one partition statistics object (api.md §2.4);
// oldest_segment_at (Unix seconds) is omitted when unknown.
type partitionStatsJSON struct {
	Index           int32  `json:"index"`
	Segments        int    `json:"segments"`
	OldestOffset    int64  `json:"oldest_offset"`
	NextOffset      int64  `json:"next_offset"`
	HighWatermark   int64  `json:"high_watermark"`
	SizeBytes       int64  `json:"size_bytes"`
	OldestSegmentAt int64  `json:"oldest_segment_at,omitempty"`
	OwnerNode       string `json:"owner_node,omitempty"`
	Status          string `json:"status"`
	OwnerLiveness   string `json:"owner_liveness,omitempty"`
}

type topicListJSON struct {
	Topics        []topicJSON `json:"topics"`
	NextPageToken string      `json:"next_page_token"`
}

type schemaHistoryJSON struct {
	Topic    string              `json:"topic"`
	Version  int32               `json:"version"`
	Versions []schemaVersionJSON `json:"versions"`
}

type schemaVersionJSON struct {
	Version int32           `json:"version"`
	Schema  json.RawMessage `json:"schema"`
}

func topicView(t meta.Topic) topicJSON {
	return topicJSON{
		Name: t.Name, ID: t.ID, Partitions: t.Partitions, RetentionMs: t.RetentionMs,
		VisibilityTimeoutMs: t.VisibilityTimeoutMs, MaxInFlight: t.MaxInFlight, MaxAckedAhead: t.MaxAckedAhead,
		CreatedAt: t.CreatedAt, Owner: t.Owner, Role: t.Role(), Children: t.Children, Parent: t.Parent,
		AttachEpoch: t.AttachEpoch, FanoutDelayMs: t.FanoutDelayMs, AttachOffsets: t.AttachOffsets,
		Remote: remoteLinkView(t.Remote, false), Redelivery: redeliveryView(t.Redelivery),
		DeadLetter: deadLetterView(t.DeadLetter), Redrive: redriveView(t.Redrive),
	}
}

func describeView(d topics.Description) topicDescribeJSON {
	out := topicDescribeJSON{topicJSON: topicView(d.Topic), SchemaVersion: d.SchemaVersion, Partial: d.Partial,
		PartitionStats: make([]partitionStatsJSON, 0, len(d.Stats))}
	if d.Schema != nil {
		out.Schema = d.Schema
	}
	for _, s := range d.Stats {
		out.PartitionStats = append(out.PartitionStats, partitionStatsJSON{
			Index: s.Index, Segments: s.Segments, OldestOffset: s.OldestOffset, NextOffset: s.NextOffset,
			HighWatermark: s.HighWatermark, SizeBytes: s.SizeBytes, OldestSegmentAt: s.OldestSegmentAt,
			OwnerNode: s.OwnerNode, Status: s.Status, OwnerLiveness: s.OwnerLiveness,
		})
	}
	return out
}
