package remotes

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"

	"github.com/narad/narad/application/releasegate"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// The gates of a remote write (internals.md §7.8). The release gate holds
// back every remote entry type until each member and Raft server applies
// it; the posture gate holds back the writes that hand a password or a
// link to the cluster (create, change, re-encrypt, attach, resume) until
// every member answers with security on and legacy cluster auth off.

// GateError is the 412 of a remote write a gate held back: Members names
// who held it and why.
type GateError struct {
	Gate    string // "release" or "posture"
	Members []GateMember
}

// GateMember is one member that holds a write back.
type GateMember struct {
	Node   string
	Reason string
}

// Gate names.
const (
	GateRelease = "release"
	GatePosture = "posture"
)

// Posture holds-back reasons.
const (
	reasonNoAnswer    = "did not answer"
	reasonSecurityOff = "security is off"
	reasonLegacyAuth  = "security.allow_legacy_cluster_auth is on"
)

func (e *GateError) Error() string {
	parts := make([]string, len(e.Members))
	for i, m := range e.Members {
		parts[i] = m.Node + ": " + m.Reason
	}
	if e.Gate == GateRelease {
		return "a member does not apply the remote entry types yet (" + strings.Join(parts, "; ") + ")"
	}
	return "a member's posture forbids remote writes (" + strings.Join(parts, "; ") + ")"
}

func (e *GateError) Unwrap() error { return domain.ErrPrecondition }

// Servers reads the metadata shard's Raft configuration (the release
// gate counts record-less servers).
type Servers interface {
	Membership(ctx context.Context) (ports.RaftMembership, error)
}

// Posture is this node's posture as op 36 reports it.
func (s *Service) Posture() ports.RemotePosture {
	return ports.RemotePosture{Node: s.o.Self, SecurityEnabled: s.cache.d.Secured,
		LegacyClusterAuth: s.o.LegacyClusterAuth, RaftTLS: s.o.RaftTLS}
}

// gates runs the release gate for t and, when posture, the posture gate.
func (s *Service) gates(ctx context.Context, t meta.EntryType, posture bool) error {
	if err := s.releaseGate(ctx, t); err != nil {
		return err
	}
	if posture {
		return s.postureGate(ctx)
	}
	return nil
}

// releaseGate refuses t while a member record or a Raft server reports an
// older release (meta.Gate decides; this node's build is the leader's
// stand-in at the ingress, and the leader checks again before proposing).
func (s *Service) releaseGate(ctx context.Context, t meta.EntryType) error {
	h, held, err := releasegate.Check(ctx, s.o.Self, s.d.Store, s.d.Servers, t)
	switch {
	case errors.Is(err, releasegate.ErrServersUnread):
		return domain.Refuse(domain.ErrUnavailable, "could not read the Raft configuration for the release gate; retry")
	case err != nil:
		return readFailure(err)
	case !held:
		return nil
	}
	return &GateError{Gate: GateRelease, Members: []GateMember{{Node: releasegate.Node(h), Reason: h.String()}}}
}

// postureGate asks every member (this node included) for its posture; a
// member that does not answer within postureAnswerTimeout, runs with
// security off or accepts legacy cluster auth holds the write back.
func (s *Service) postureGate(ctx context.Context) error {
	members, err := s.d.Store.Members()
	if err != nil {
		return readFailure(err)
	}
	var (
		mu   sync.Mutex
		held []GateMember
		wg   sync.WaitGroup
	)
	hold := func(node, reason string) {
		mu.Lock()
		defer mu.Unlock()
		held = append(held, GateMember{Node: node, Reason: reason})
	}
	judge := func(p ports.RemotePosture, node string) {
		switch {
		case !p.SecurityEnabled:
			hold(node, reasonSecurityOff)
		case p.LegacyClusterAuth:
			hold(node, reasonLegacyAuth)
		}
	}
	judge(s.Posture(), s.o.Self)
	for _, m := range members {
		if m.ID == s.o.Self {
			continue
		}
		if s.d.Members == nil {
			hold(m.ID, reasonNoAnswer)
			continue
		}
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, postureAnswerTimeout)
			defer cancel()
			p, err := s.d.Members.Posture(ctx, m.ID)
			if err != nil {
				hold(m.ID, reasonNoAnswer)
				return
			}
			judge(p, m.ID)
		})
	}
	wg.Wait()
	if len(held) == 0 {
		return nil
	}
	slices.SortFunc(held, func(a, b GateMember) int { return strings.Compare(a.Node, b.Node) })
	return &GateError{Gate: GatePosture, Members: held}
}
