package quicpeer

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/narad/narad/ports"
)

var _ ports.PeerStatus = (*Peers)(nil)

// StatusReporter answers NodeStatus for this node:
// *membership.StatusReporter satisfies it.
type StatusReporter interface {
	NodeStatus(ctx context.Context) (ports.NodeStatus, error)
}

// nodeStatusBody is NodeStatus's reply body (internals.md §10.3): JSON, in
// the shape of the members listing's node_status (api.md §2.17), moves
// being this node's move workers.
type nodeStatusBody struct {
	Node            string         `json:"node"`
	Draining        bool           `json:"draining"`
	ProduceInFlight int64          `json:"produce_in_flight"`
	DispatchBacklog uint64         `json:"dispatch_backlog"`
	Quarantine      quarantineBody `json:"quarantine"`
	Moves           []moveBody     `json:"moves"`
}

// moveBody is one move worker (api.md §2.17 worker).
type moveBody struct {
	Topic       string    `json:"topic"`
	Partition   int32     `json:"partition"`
	Source      string    `json:"source"`
	Target      string    `json:"target"`
	StartedAt   time.Time `json:"started_at"`
	Phase       string    `json:"phase"`
	Attempts    int       `json:"attempts"`
	LastError   string    `json:"last_error,omitempty"`
	CopiedBytes int64     `json:"copied_bytes"`
	Blocked     string    `json:"blocked,omitempty"`
}

type quarantineBody struct {
	Copies int      `json:"copies"`
	Bytes  int64    `json:"bytes"`
	List   []string `json:"list"`
}

// nodeStatusListMax bounds the quarantine list a reply may carry, and
// nodeStatusMovesMax its move workers (a node runs at most 8 moves; the
// bound leaves room for a larger budget).
const (
	nodeStatusListMax  = 100
	nodeStatusMovesMax = 1024
)

// NodeStatus asks node for its status (op 33) under the caller's deadline
// (the 5 s reply default without one).
func (p *Peers) NodeStatus(ctx context.Context, node string) (ports.NodeStatus, error) {
	body, err := p.call(ctx, node, OpNodeStatus, nil)
	if err != nil {
		return ports.NodeStatus{}, err
	}
	st, err := decodeNodeStatus(body)
	if err != nil {
		return ports.NodeStatus{}, unreadableReply("node status", node, err)
	}
	return st, nil
}

func decodeNodeStatus(body []byte) (ports.NodeStatus, error) {
	var b nodeStatusBody
	if err := strictJSON(body, &b); err != nil {
		return ports.NodeStatus{}, err
	}
	q := b.Quarantine
	if b.Node == "" || b.ProduceInFlight < 0 || q.Copies < 0 || q.Bytes < 0 || len(q.List) > nodeStatusListMax || len(q.List) > q.Copies {
		return ports.NodeStatus{}, fmt.Errorf("node status %+v out of range: %w", b, ErrBadPayload)
	}
	if len(b.Moves) > nodeStatusMovesMax {
		return ports.NodeStatus{}, fmt.Errorf("node status with %d moves: %w", len(b.Moves), ErrBadPayload)
	}
	moves := make([]ports.MoveReport, len(b.Moves))
	for i, m := range b.Moves {
		moves[i] = ports.MoveReport{Topic: m.Topic, Partition: m.Partition, Source: m.Source, Target: m.Target,
			StartedAt: m.StartedAt, Phase: m.Phase, Attempts: m.Attempts, LastError: m.LastError, CopiedBytes: m.CopiedBytes, Blocked: m.Blocked}
	}
	return ports.NodeStatus{Node: b.Node, Draining: b.Draining, ProduceInFlight: b.ProduceInFlight, Moves: moves,
		DispatchBacklog: b.DispatchBacklog, Quarantine: ports.QuarantineInventory{Copies: q.Copies, Bytes: q.Bytes, List: q.List}}, nil
}

func encodeNodeStatus(st ports.NodeStatus) []byte {
	list := st.Quarantine.List
	if list == nil {
		list = []string{}
	}
	moves := make([]moveBody, len(st.Moves))
	for i, m := range st.Moves {
		moves[i] = moveBody{Topic: m.Topic, Partition: m.Partition, Source: m.Source, Target: m.Target,
			StartedAt: m.StartedAt, Phase: m.Phase, Attempts: m.Attempts, LastError: m.LastError, CopiedBytes: m.CopiedBytes, Blocked: m.Blocked}
	}
	b, _ := json.Marshal(nodeStatusBody{Node: st.Node, Draining: st.Draining, ProduceInFlight: st.ProduceInFlight,
		DispatchBacklog: st.DispatchBacklog, Moves: moves,
		Quarantine: quarantineBody{Copies: st.Quarantine.Copies, Bytes: st.Quarantine.Bytes, List: list}})
	return b // a struct of plain fields always marshals
}

// RegisterNodeStatus serves NodeStatus (op 33) with r; a request with any
// payload is refused (400), as an unknown trailing field is. It panics on
// a nil r.
func RegisterNodeStatus(srv *Server, r StatusReporter) {
	if r == nil {
		panic("quicpeer: nil status reporter")
	}
	srv.Handle(OpNodeStatus, func(ctx context.Context, p []byte) ([]byte, error) {
		if len(p) != 0 {
			return errReply(fmt.Errorf("node status: %d bytes of trailing data: %w", len(p), ErrBadPayload)), nil
		}
		st, err := r.NodeStatus(ctx)
		if err != nil {
			return errReply(err), nil
		}
		return okReply(encodeNodeStatus(st)), nil
	})
}
