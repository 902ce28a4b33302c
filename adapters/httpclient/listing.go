package httpclient

import (
	"context"
	"encoding/json"
	"net/url"
)

// Children is a parent's children listing (api.md §2.11).
type Children struct {
	Parent   string  `json:"parent"`
	ParentID string  `json:"parent_id,omitempty"`
	Children []Child `json:"children"`
}

// Child is one child with its lag; a remote child adds its link.
type Child struct {
	Name        string `json:"name"`
	DelayMs     int64  `json:"delay_ms"`
	LagMessages int64  `json:"lag_messages"`
	LagComplete bool   `json:"lag_complete"`
	*RemoteLink
}

// RemoteLink is what a children listing says of a remote child's link.
type RemoteLink struct {
	Remote                   json.RawMessage `json:"remote"`
	Paused                   bool            `json:"paused"`
	State                    string          `json:"state"`
	BlockedAt                *BlockedAt      `json:"blocked_at"`
	TargetVerifiedAt         *string         `json:"target_verified_at"`
	Unverified               bool            `json:"unverified"`
	LastSuccessAt            *string         `json:"last_success_at"`
	LagSeconds               int64           `json:"lag_seconds"`
	RetentionHeadroomSeconds *int64          `json:"retention_headroom_seconds,omitempty"`
	SourceDrained            bool            `json:"source_drained"`
	Partitions               []LinkPartition `json:"partitions,omitempty"`
}

// LinkPartition is one parent partition's row of a remote child
// (partitions=true). StartOffset is the link's start on the partition,
// NextOffset the next parent offset it ships, HighWatermark the parent
// partition's and AckFrontier the first offset the parent's consumers have
// not acked; each nil when the server could not tell (or is of a build
// that does not report it).
type LinkPartition struct {
	Partition     int        `json:"partition"`
	Node          string     `json:"node"`
	StartOffset   *int64     `json:"start_offset,omitempty"`
	NextOffset    *int64     `json:"next_offset,omitempty"`
	HighWatermark *int64     `json:"high_watermark,omitempty"`
	AckFrontier   *int64     `json:"ack_frontier,omitempty"`
	State         string     `json:"state"`
	LastSuccessAt *string    `json:"last_success_at"`
	BlockedAt     *BlockedAt `json:"blocked_at"`
}

// IsRemote reports whether the child is a remote child.
func (c Child) IsRemote() bool {
	return c.RemoteLink != nil && len(c.Remote) > 0 && string(c.Remote) != "null"
}

// ListChildren reads parent's children; partitions adds a remote child's
// per-partition rows.
func (c *Client) ListChildren(ctx context.Context, parent string, partitions bool) (*Children, error) {
	q := url.Values{}
	if partitions {
		q.Set("partitions", "true")
	}
	var out Children
	if err := c.getJSON(ctx, "/v1/topics/"+url.PathEscape(parent)+"/children", q, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
