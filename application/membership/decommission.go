package membership

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/domain/rebalance"
	"github.com/narad/narad/ports"
)

// Reason codes of a decommission refusal (api.md §2.17).
const (
	ReasonBelowMinVoters    = "below_min_voters"
	ReasonNoHealthyMajority = "no_healthy_majority"
	ReasonNoReceivers       = "no_receivers"
	ReasonOwnerDead         = "owner_dead"
)

// Reason is one reason a node could never be drained safely.
type Reason struct {
	Code    string
	Message string
}

// Verdict is what a decommission of Member would meet now.
type Verdict struct {
	Member            string
	WouldDecommission bool
	Reasons           []Reason
	Voter             bool
	OwnedPartitions   int
	InboundMoves      int
}

// RefusedError is a decommission the verdict refuses (409 with every
// reason). It wraps domain.ErrConflict.
type RefusedError struct{ Verdict Verdict }

func (e *RefusedError) Error() string {
	parts := make([]string, len(e.Verdict.Reasons))
	for i, r := range e.Verdict.Reasons {
		parts[i] = r.Message
	}
	return fmt.Sprintf("%s cannot be decommissioned: %s", e.Verdict.Member, strings.Join(parts, "; "))
}

func (e *RefusedError) Unwrap() error { return domain.ErrConflict }

// DecommissionStore is what decommission reads and writes.
type DecommissionStore interface {
	RosterStore
	ports.MetadataProposer
}

// Caller is who asks for a cluster change, for the audit log.
type Caller struct {
	Name   string // the authenticated user ("" with security off)
	Remote string // the client's address
}

// Decommissioner marks nodes draining and clears the mark (api.md §2.17,
// internals.md §11.7), leaving one audit line per attempt. Safe for
// concurrent use.
type Decommissioner struct {
	store DecommissionStore
	clock ports.Clock
	audit ports.AuditLog // nil: no audit lines
}

// WithAudit returns d recording each decommission and cancel in log.
func (d *Decommissioner) WithAudit(log ports.AuditLog) *Decommissioner {
	d.audit = log
	return d
}

// NewDecommissioner returns a Decommissioner; it panics on a nil dependency.
func NewDecommissioner(store DecommissionStore, clock ports.Clock) *Decommissioner {
	if store == nil || clock == nil {
		panic("membership: decommissioner needs a store and a clock")
	}
	return &Decommissioner{store: store, clock: clock}
}

// Verdict judges a decommission of id from the local replica and the Raft
// configuration, changing nothing. Errors: domain.ErrMemberNotFound,
// domain.ErrUnavailable (the configuration cannot be read), a store error.
func (d *Decommissioner) Verdict(ctx context.Context, id string) (Verdict, error) {
	members, err := d.store.Members()
	if err != nil {
		return Verdict{}, readFailure(err)
	}
	self, ok := findMember(members, id)
	if !ok {
		return Verdict{}, domain.ErrMemberNotFound
	}
	counts, err := countPlacement(d.store)
	if err != nil {
		return Verdict{}, readFailure(err)
	}
	cfg, err := d.store.Membership(ctx)
	if err != nil {
		return Verdict{}, domain.Refuse(domain.ErrUnavailable, "raft configuration unavailable: "+err.Error())
	}
	_, voter := cfg.Voters[meta.ReplicaID(id)]
	v := Verdict{Member: id, Voter: voter, OwnedPartitions: counts.owned[id], InboundMoves: counts.inbound[id]}
	if voter {
		v.Reasons = append(v.Reasons, voterReasons(id, members, cfg)...)
	}
	v.Reasons = append(v.Reasons, ownerReasons(self, members, counts.owned[id])...)
	v.WouldDecommission = len(v.Reasons) == 0
	return v, nil
}

// voterReasons are the quorum rules: at least rebalance.MinVoters voters that are not
// draining must remain, and a majority of the current voters must remain
// alive.
func voterReasons(id string, members []meta.Member, cfg ports.RaftMembership) []Reason {
	byID := make(map[uint64]meta.Member, len(members))
	for _, m := range members {
		byID[meta.ReplicaID(m.ID)] = m
	}
	remain, alive := 0, 0
	self := meta.ReplicaID(id)
	for rid := range cfg.Voters {
		m, known := byID[rid]
		if rid == self {
			continue
		}
		if known && m.Status == meta.StatusAlive {
			alive++ // a draining voter still votes
		}
		if !known || !m.Draining {
			remain++
		}
	}
	var out []Reason
	if remain < rebalance.MinVoters {
		out = append(out, Reason{ReasonBelowMinVoters, fmt.Sprintf(
			"%d voters would remain that are not draining; at least %d must", remain, rebalance.MinVoters)})
	}
	if quorum := len(cfg.Voters)/2 + 1; alive < quorum {
		out = append(out, Reason{ReasonNoHealthyMajority, fmt.Sprintf(
			"only %d of the other voters are alive; a majority of the %d voters (%d) must stay alive", alive, len(cfg.Voters), quorum)})
	}
	return out
}

// ownerReasons are the placement rules: a node that owns partitions needs
// somewhere alive to send them and must be alive to send them.
func ownerReasons(self meta.Member, members []meta.Member, owned int) []Reason {
	if owned == 0 {
		return nil
	}
	var out []Reason
	if self.Status == meta.StatusDead {
		out = append(out, Reason{ReasonOwnerDead, fmt.Sprintf(
			"%s is dead and owns %d partitions: they cannot be copied off it", self.ID, owned)})
	}
	receivers := 0
	for _, m := range members {
		if m.ID != self.ID && m.Status == meta.StatusAlive && !m.Draining {
			receivers++
		}
	}
	if receivers == 0 {
		out = append(out, Reason{ReasonNoReceivers, fmt.Sprintf(
			"%s owns %d partitions and no other alive member that is not draining can take them", self.ID, owned)})
	}
	return out
}

// Start marks id draining once its verdict allows it; a node already
// draining is answered the same (idempotent). Errors: *RefusedError,
// domain.ErrMemberNotFound, domain.ErrUnavailable, a store error.
func (d *Decommissioner) Start(ctx context.Context, c Caller, id string) (err error) {
	defer func() { d.record(ports.AuditDecommission, c, id, err) }()
	v, err := d.Verdict(ctx, id)
	if err != nil {
		return err
	}
	if !v.WouldDecommission {
		return &RefusedError{Verdict: v}
	}
	return d.setDraining(ctx, c.Name, id, true)
}

// Cancel clears id's drain mark. Errors: domain.ErrMemberNotFound,
// domain.ErrUnavailable, a store error.
func (d *Decommissioner) Cancel(ctx context.Context, c Caller, id string) (err error) {
	defer func() { d.record(ports.AuditDecommissionStop, c, id, err) }()
	members, err := d.store.Members()
	if err != nil {
		return readFailure(err)
	}
	if _, ok := findMember(members, id); !ok {
		return domain.ErrMemberNotFound
	}
	return d.setDraining(ctx, c.Name, id, false)
}

// auditSubjectMax bounds the member id an audit line repeats.
const auditSubjectMax = 64

// record writes the audit line of one attempt: ok, refused (with the
// client's message) or failed.
func (d *Decommissioner) record(event string, c Caller, id string, err error) {
	if d.audit == nil {
		return
	}
	outcome, reason := ports.AuditOK, ""
	var r *domain.Refusal
	switch {
	case err == nil:
	case errors.Is(err, domain.ErrUnavailable):
		outcome, reason = ports.AuditFailed, err.Error()
	case errors.As(err, &r), errors.Is(err, domain.ErrConflict), errors.Is(err, domain.ErrMemberNotFound):
		outcome, reason = ports.AuditRefused, err.Error()
	default:
		outcome, reason = ports.AuditFailed, err.Error()
	}
	if len(id) > auditSubjectMax {
		id = id[:auditSubjectMax]
	}
	d.audit.Record(ports.AuditEvent{Event: event, Actor: c.Name, Subject: "member " + strconv.Quote(id),
		Outcome: outcome, Reason: reason, Remote: c.Remote})
}

func (d *Decommissioner) setDraining(ctx context.Context, actor, id string, draining bool) error {
	env := meta.Envelope{Actor: actor, AtMs: d.clock.Now().UnixMilli(), Event: &meta.SetMemberDraining{ID: id, Draining: draining}}
	applied, err := d.store.Propose(ctx, env)
	if err != nil {
		return proposeFailure(err)
	}
	switch applied.Result.Code {
	case meta.CodeOK:
		return nil
	case meta.CodeNotFound:
		return domain.ErrMemberNotFound // removed meanwhile
	}
	return fmt.Errorf("membership: drain %q: %w", id, applied.Result.Err())
}

func findMember(members []meta.Member, id string) (meta.Member, bool) {
	for _, m := range members {
		if m.ID == id {
			return m, true
		}
	}
	return meta.Member{}, false
}

// readFailure maps a local metadata read error: a stopped or lagging
// replica is transient (503), anything else is internal.
func readFailure(err error) error {
	if errors.Is(err, meta.ErrStopped) || errors.Is(err, meta.ErrNotCaughtUp) || errors.Is(err, meta.ErrUnavailable) {
		return domain.Refuse(domain.ErrUnavailable, "metadata unavailable on this node: "+err.Error())
	}
	return fmt.Errorf("membership: read metadata: %w", err)
}

// proposeFailure maps a Propose error: an invalid event or a type held
// back is certain not to apply; anything else may still apply (503).
func proposeFailure(err error) error {
	if errors.Is(err, meta.ErrInvalidEvent) || errors.Is(err, meta.ErrTypeHeldBack) {
		return fmt.Errorf("membership: proposal refused: %w", err)
	}
	return domain.Refuse(domain.ErrUnavailable,
		"control plane temporarily unavailable: the change may still be applied, read it back before retrying: "+err.Error())
}
