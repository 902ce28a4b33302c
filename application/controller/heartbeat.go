package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// ErrDecommissioned: this node's id was tombstoned by a decommission; its
// heartbeats and registrations are refused until it rejoins with an empty
// data directory.
var ErrDecommissioned = errors.New("controller: this node was decommissioned")

// HeartbeatStore is what the Heartbeater needs: proposals (forwarded to the
// leader by the store) and the local member records.
type HeartbeatStore interface {
	ports.MetadataProposer
	Members() ([]meta.Member, error)
}

// HeartbeatConfig are the Heartbeater's dependencies and this node's
// member record. Every field but Build and EntryTypes is required.
type HeartbeatConfig struct {
	Store HeartbeatStore
	Clock ports.Clock
	Log   *slog.Logger
	// ID, Addr and ClusterAddr are this node's member id, its HTTP and
	// node-RPC address, and its Raft address.
	ID          string
	Addr        string
	ClusterAddr string
	// Build and EntryTypes are the release report every heartbeat carries
	// (internals §8.3).
	Build      string
	EntryTypes meta.EntryType
}

// Heartbeater keeps this node's member record alive (internals §9.4): it
// registers (retrying every 250 ms until the first success), then proposes
// a heartbeat every 5 s. A record that is missing or marked dead is
// registered again, which revives it; draining survives either entry.
type Heartbeater struct {
	cfg HeartbeatConfig
}

// NewHeartbeater returns a Heartbeater; it panics on a missing dependency.
func NewHeartbeater(cfg HeartbeatConfig) *Heartbeater {
	switch {
	case cfg.Store == nil:
		panic("controller: nil heartbeat store")
	case cfg.Clock == nil:
		panic("controller: nil heartbeat clock")
	case cfg.Log == nil:
		panic("controller: nil heartbeat logger")
	case cfg.ID == "" || cfg.Addr == "" || cfg.ClusterAddr == "":
		panic("controller: heartbeat needs the node id and both addresses")
	}
	return &Heartbeater{cfg: cfg}
}

// Run beats at once, then every 5 s once a beat succeeded (every 250 ms
// until then), until ctx ends. Failures are logged; a decommissioned node
// keeps trying at the slow cadence (a rejoin may readmit it).
func (h *Heartbeater) Run(ctx context.Context) error {
	registered := false
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-timer.C:
		}
		err := h.Beat(ctx)
		switch {
		case err == nil:
			registered = true
		case ctx.Err() != nil:
			return nil
		default:
			h.cfg.Log.Warn("member heartbeat failed", slog.String("node", h.cfg.ID), slog.Any("error", err))
		}
		next := heartbeatInterval
		if !registered && !errors.Is(err, ErrDecommissioned) {
			next = registrationRetryInterval
		}
		timer.Reset(next)
	}
}

// Beat proposes one heartbeat for this node, or a registration when the
// local replica holds no alive record of it (first start, dead-marked, or
// the heartbeat found no record). It returns once this node's replica
// applied the entry.
func (h *Heartbeater) Beat(ctx context.Context) error {
	rec, ok, err := h.record()
	if err != nil {
		return err
	}
	if !ok || rec.Status != meta.StatusAlive {
		return h.propose(ctx, h.join())
	}
	err = h.propose(ctx, &meta.MemberHeartbeat{ID: h.cfg.ID, Build: h.cfg.Build, EntryTypes: h.cfg.EntryTypes})
	if errors.Is(err, errNoRecord) {
		return h.propose(ctx, h.join())
	}
	return err
}

// errNoRecord: the heartbeat found no member record on the leader.
var errNoRecord = errors.New("controller: no member record")

func (h *Heartbeater) join() meta.Event {
	return &meta.MemberJoin{ID: h.cfg.ID, Addr: h.cfg.Addr, ClusterAddr: h.cfg.ClusterAddr,
		Build: h.cfg.Build, EntryTypes: h.cfg.EntryTypes}
}

// record reads this node's member record from the local replica.
func (h *Heartbeater) record() (meta.Member, bool, error) {
	members, err := h.cfg.Store.Members()
	if err != nil {
		return meta.Member{}, false, fmt.Errorf("controller: heartbeat: read members: %w", err)
	}
	for _, m := range members {
		if m.ID == h.cfg.ID {
			return m, true, nil
		}
	}
	return meta.Member{}, false, nil
}

func (h *Heartbeater) propose(ctx context.Context, ev meta.Event) error {
	env := meta.Envelope{Actor: "node:" + h.cfg.ID, AtMs: h.cfg.Clock.Now().UnixMilli(), Event: ev}
	applied, err := h.cfg.Store.Propose(ctx, env)
	if err != nil {
		return fmt.Errorf("controller: %s: %w", ev.Subject(), err)
	}
	switch applied.Result.Code {
	case meta.CodeOK:
		return nil
	case meta.CodeNotFound:
		return fmt.Errorf("%s: %w", ev.Subject(), errNoRecord)
	case meta.CodeRefused:
		return fmt.Errorf("%s: %w: %w", ev.Subject(), ErrDecommissioned, applied.Result.Err())
	}
	return fmt.Errorf("controller: %s: %w", ev.Subject(), applied.Result.Err())
}
