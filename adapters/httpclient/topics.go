package httpclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
)

// Topic is the topic object of api.md §2.4, plus the fields only describe
// adds (schema_version, schema, partition_stats, partial).
type Topic struct {
	Name                      string           `json:"name"`
	ID                        string           `json:"id,omitempty"`
	Partitions                int              `json:"partitions"`
	RetentionMs               int64            `json:"retention_ms"`
	VisibilityTimeoutMs       int64            `json:"visibility_timeout_ms"`
	MaxInFlightPerPartition   int64            `json:"max_in_flight_per_partition"`
	MaxAckedAheadPerPartition int64            `json:"max_acked_ahead_per_partition"`
	CreatedAt                 int64            `json:"created_at"`
	Owner                     string           `json:"owner,omitempty"`
	Role                      string           `json:"role,omitempty"`
	Children                  []string         `json:"children,omitempty"`
	Parent                    string           `json:"parent,omitempty"`
	AttachEpoch               string           `json:"attach_epoch,omitempty"`
	FanoutDelayMs             int64            `json:"fanout_delay_ms,omitempty"`
	AttachOffsets             []int64          `json:"attach_offsets,omitempty"`
	Remote                    json.RawMessage  `json:"remote,omitempty"`
	SchemaVersion             int              `json:"schema_version,omitempty"`
	Schema                    json.RawMessage  `json:"schema,omitempty"`
	PartitionStats            []PartitionStats `json:"partition_stats,omitempty"`
	Partial                   bool             `json:"partial,omitempty"`
	// Redelivery is the topic's redelivery backoff as the server sent it.
	Redelivery json.RawMessage `json:"redelivery,omitempty"`
	// DeadLetter is the topic's dead-letter policy as the server sent it.
	DeadLetter json.RawMessage `json:"dead_letter,omitempty"`
	// Redrive is the last redrive job started on the topic, nil when none was.
	Redrive *Redrive `json:"redrive,omitempty"`
}

// PartitionStats is one entry of a describe's partition_stats (api.md §2.4).
type PartitionStats struct {
	Index           int    `json:"index"`
	Segments        int    `json:"segments"`
	OldestOffset    int64  `json:"oldest_offset"`
	NextOffset      int64  `json:"next_offset"`
	HighWatermark   int64  `json:"high_watermark"`
	SizeBytes       int64  `json:"size_bytes"`
	OldestSegmentAt int64  `json:"oldest_segment_at,omitempty"`
	OwnerNode       string `json:"owner_node,omitempty"`
	Status          string `json:"status,omitempty"`
	OwnerLiveness   string `json:"owner_liveness,omitempty"`
}

// StatusOwnerUnavailable marks a placeholder entry whose numbers are zeros.
const StatusOwnerUnavailable = "owner_unavailable"

// Available reports whether the entry's numbers came from the owner; totals
// must skip entries that are not.
func (s PartitionStats) Available() bool { return s.Status == "" || s.Status == "ok" }

// TopicSpec is the create request of api.md §2.5. Zero fields are left out
// (server defaults); RetentionMs nil means the server default and a pointer to
// 0 means keep forever.
type TopicSpec struct {
	Name                      string          `json:"name"`
	Partitions                int             `json:"partitions,omitempty"`
	RetentionMs               *int64          `json:"retention_ms,omitempty"`
	VisibilityTimeoutMs       int64           `json:"visibility_timeout_ms,omitempty"`
	MaxInFlightPerPartition   int64           `json:"max_in_flight_per_partition,omitempty"`
	MaxAckedAheadPerPartition int64           `json:"max_acked_ahead_per_partition,omitempty"`
	Schema                    json.RawMessage `json:"schema,omitempty"`
	Parent                    string          `json:"parent,omitempty"`
	FanoutDelayMs             int64           `json:"fanout_delay_ms,omitempty"`
	Redelivery                *Redelivery     `json:"redelivery,omitempty"`
	DeadLetter                *DeadLetter     `json:"dead_letter,omitempty"`
}

// Redelivery is a redelivery backoff to set (docs/api-extensions.md
// "Redelivery backoff"); zero fields other than InitialMs take the
// server's defaults.
type Redelivery struct {
	InitialMs  int64   `json:"initial_ms"`
	Multiplier float64 `json:"multiplier,omitempty"`
	MaxMs      int64   `json:"max_ms,omitempty"`
	Jitter     float64 `json:"jitter,omitempty"`
}

// DeadLetter is a dead-letter policy to set (docs/api-extensions.md "Dead
// letters"): both fields are sent, and the server requires both.
type DeadLetter struct {
	Topic           string `json:"topic"`
	MaxReceiveCount int64  `json:"max_receive_count"`
}

// TopicAlter is the alter request of api.md §2.8: nil and zero fields are
// left out. RetentionMs pointing at 0 means keep forever.
type TopicAlter struct {
	RetentionMs               *int64          `json:"retention_ms,omitempty"`
	MaxInFlightPerPartition   *int64          `json:"max_in_flight_per_partition,omitempty"`
	MaxAckedAheadPerPartition *int64          `json:"max_acked_ahead_per_partition,omitempty"`
	Partitions                int             `json:"partitions,omitempty"`
	Schema                    json.RawMessage `json:"schema,omitempty"`
	SchemaBaseVersion         int             `json:"schema_base_version,omitempty"`
	// Redelivery sets the redelivery backoff; ClearRedelivery sends null.
	Redelivery      *Redelivery `json:"-"`
	ClearRedelivery bool        `json:"-"`
	// DeadLetter sets the dead-letter policy; ClearDeadLetter sends null.
	DeadLetter      *DeadLetter `json:"-"`
	ClearDeadLetter bool        `json:"-"`
}

// MarshalJSON adds "redelivery" and "dead_letter": the policy, null to
// clear it, or nothing.
func (a TopicAlter) MarshalJSON() ([]byte, error) {
	type plain TopicAlter
	out := struct {
		plain
		Redelivery any `json:"redelivery,omitempty"`
		DeadLetter any `json:"dead_letter,omitempty"`
	}{plain: plain(a)}
	switch {
	case a.Redelivery != nil:
		out.Redelivery = a.Redelivery
	case a.ClearRedelivery:
		out.Redelivery = json.RawMessage("null")
	}
	switch {
	case a.DeadLetter != nil:
		out.DeadLetter = a.DeadLetter
	case a.ClearDeadLetter:
		out.DeadLetter = json.RawMessage("null")
	}
	return json.Marshal(out)
}

// SchemaHistory is the answer of GET /v1/topics/{topic}/schema (api.md §2.9.1).
type SchemaHistory struct {
	Topic    string          `json:"topic"`
	Version  int             `json:"version"`
	Versions []SchemaVersion `json:"versions"`
}

// SchemaVersion is one registered schema.
type SchemaVersion struct {
	Version int             `json:"version"`
	Schema  json.RawMessage `json:"schema"`
}

// CreateTopic creates a topic (201) and returns it.
func (c *Client) CreateTopic(ctx context.Context, spec TopicSpec) (*Topic, error) {
	var t Topic
	if err := c.sendJSON(ctx, http.MethodPost, "/v1/topics", spec, &t); err != nil {
		return nil, err
	}
	return &t, nil
}

// maxTopicPages stops ListTopics on a server whose tokens never end.
const maxTopicPages = 1 << 20

// ListTopics returns every topic the caller may see, following
// next_page_token until it is empty (pages may be short or empty meanwhile).
func (c *Client) ListTopics(ctx context.Context) ([]Topic, error) {
	out := []Topic{}
	token := ""
	for range maxTopicPages {
		var page struct {
			Topics        []Topic `json:"topics"`
			NextPageToken string  `json:"next_page_token"`
		}
		q := url.Values{}
		if token != "" {
			q.Set("page_token", token)
		}
		if err := c.getJSON(ctx, "/v1/topics", q, &page); err != nil {
			return nil, err
		}
		out = append(out, page.Topics...)
		if page.NextPageToken == "" {
			return out, nil
		}
		if page.NextPageToken <= token {
			return nil, fmt.Errorf("list topics: page token %q does not advance past %q: %w", page.NextPageToken, token, ErrMalformedReply)
		}
		token = page.NextPageToken
	}
	return nil, fmt.Errorf("list topics: more than %d pages: %w", maxTopicPages, ErrMalformedReply)
}

// Topic describes one topic, with its schema and partition statistics.
func (c *Client) Topic(ctx context.Context, name string) (*Topic, error) {
	var t Topic
	if err := c.getJSON(ctx, topicPath(name, ""), nil, &t); err != nil {
		return nil, err
	}
	return &t, nil
}

// AlterTopic applies a change (200) and returns the topic as of the last
// applied group; the server applies groups one by one (api.md §2.8).
func (c *Client) AlterTopic(ctx context.Context, name string, change TopicAlter) (*Topic, error) {
	var t Topic
	if err := c.sendJSON(ctx, http.MethodPatch, topicPath(name, ""), change, &t); err != nil {
		return nil, err
	}
	return &t, nil
}

// DeleteTopic deletes a topic and all its data (204).
func (c *Client) DeleteTopic(ctx context.Context, name string) error {
	_, err := c.do(ctx, request{method: http.MethodDelete, path: topicPath(name, "")})
	return err
}

// SchemaHistory returns every schema version of a topic, oldest first.
func (c *Client) SchemaHistory(ctx context.Context, name string) (*SchemaHistory, error) {
	var h SchemaHistory
	if err := c.getJSON(ctx, topicPath(name, "/schema"), nil, &h); err != nil {
		return nil, err
	}
	if h.Versions == nil {
		h.Versions = []SchemaVersion{}
	}
	return &h, nil
}
