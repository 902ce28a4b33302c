package remotes

import (
	"context"
	"sync"

	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// MemberPeers asks another member to run the target checks, or for its
// credential states (node RPC op 36).
type MemberPeers interface {
	MemberCheck(ctx context.Context, node string, req ports.RemoteCheckRequest) (ports.RemoteCheckReport, error)
	Credentials(ctx context.Context, node string) ([]ports.RemoteCredentialReport, error)
	Posture(ctx context.Context, node string) (ports.RemotePosture, error)
}

// MemberCheck runs the target checks asked by another member (the owner
// side of op 36's check mode).
func (s *Service) MemberCheck(ctx context.Context, req ports.RemoteCheckRequest) (ports.RemoteCheckReport, error) {
	r, err := s.readRemote(req.Remote)
	if err != nil {
		return toPort(Report{Node: s.o.Self, Result: ResultFail, Class: "remote_missing"}), nil
	}
	var source *meta.Topic
	if req.Source != "" {
		t, found, err := s.d.Store.Topic(req.Source)
		if err != nil {
			return ports.RemoteCheckReport{}, readFailure(err)
		}
		if found {
			source = &t
		}
	}
	return toPort(s.CheckTarget(ctx, r, req.Topic, source)), nil
}

// Credentials reports this node's credential state of every remote (the
// owner side of op 36's credentials mode).
func (s *Service) Credentials() []ports.RemoteCredentialReport {
	all, err := s.d.Store.Remotes()
	if err != nil {
		return nil
	}
	out := make([]ports.RemoteCredentialReport, 0, len(all))
	for _, r := range all {
		st := s.cache.State(r, s.o.Self)
		out = append(out, ports.RemoteCredentialReport{Remote: r.Name, State: st.State, CredentialVersion: st.CredentialVersion,
			KeyVersion: st.KeyVersion, Fingerprint: st.Fingerprint})
	}
	return append(out, s.cache.Held(all)...)
}

// checkMembers runs the target checks from every member when an allowlist
// is set, else from this node alone (api.md §2.10.2), each within 15 s;
// a member that does not answer reports the class unreachable.
func (s *Service) checkMembers(ctx context.Context, r meta.Remote, topic string, source *meta.Topic) []Report {
	self := s.CheckTarget(ctx, r, topic, source)
	members, err := s.d.Store.Members()
	if err != nil || s.d.Members == nil || !s.d.Transport.AllowlistSet() {
		return []Report{self}
	}
	out := make([]Report, len(members))
	req := ports.RemoteCheckRequest{Remote: r.Name, Topic: topic}
	if source != nil {
		req.Source = source.Name
	}
	var wg sync.WaitGroup
	for i, m := range members {
		if m.ID == s.o.Self {
			out[i] = self
			continue
		}
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, memberCheckTimeout)
			defer cancel()
			rep, err := s.d.Members.MemberCheck(ctx, m.ID, req)
			if err != nil {
				out[i] = Report{Node: m.ID, Result: ResultFail, Class: "unreachable"}
				return
			}
			out[i] = fromPort(rep)
		})
	}
	wg.Wait()
	return out
}

// foldReports is the verdict of the members' reports at the remote's
// credential version: the first failure, a member on an older credential
// (stale), members that saw different targets (target_disagreement).
func foldReports(r meta.Remote, reports []Report) (class string) {
	for _, rep := range reports {
		if rep.Result != ResultPass {
			return rep.Class
		}
	}
	for _, rep := range reports {
		if rep.CredentialVersion < r.CredentialVersion {
			return "stale"
		}
		if rep.TargetID != reports[0].TargetID {
			return "target_disagreement"
		}
	}
	return ""
}

// nodeCredentials asks every other member for its credential state of r;
// a member that does not answer is left out (unknown).
func (s *Service) nodeCredentials(ctx context.Context, members []meta.Member, r meta.Remote) map[string]NodeState {
	out := map[string]NodeState{}
	for node, creds := range s.memberCredentials(ctx, members) {
		for _, c := range creds {
			if c.Remote == r.Name {
				out[node] = NodeState{Node: node, State: c.State, CredentialVersion: c.CredentialVersion,
					KeyVersion: c.KeyVersion, Fingerprint: c.Fingerprint, LastError: "none"}
			}
		}
	}
	return out
}

// memberCredentials asks every other member, side by side, for its
// credential states (op 36); members that do not answer are absent.
func (s *Service) memberCredentials(ctx context.Context, members []meta.Member) map[string][]ports.RemoteCredentialReport {
	out := map[string][]ports.RemoteCredentialReport{}
	if s.d.Members == nil {
		return out
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, m := range members {
		if m.ID == s.o.Self {
			continue
		}
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, ownerAnswerTimeout)
			defer cancel()
			got, err := s.d.Members.Credentials(ctx, m.ID)
			if err != nil {
				return
			}
			mu.Lock()
			out[m.ID] = got
			mu.Unlock()
		})
	}
	wg.Wait()
	return out
}

func toPort(r Report) ports.RemoteCheckReport {
	out := ports.RemoteCheckReport{Node: r.Node, Result: r.Result, Class: r.Class, CredentialVersion: r.CredentialVersion,
		TargetID: r.TargetID, TargetServesIDs: r.TargetServesIDs, RTTMs: r.RTTMs, Warnings: r.Warnings,
		SecurityEnabled: r.Posture.SecurityEnabled, RaftTLS: r.Posture.RaftTLS, APIHopEncrypted: r.Posture.APIHopEncrypted,
		Capable1000: r.Capable1000}
	if !r.CertNotAfter.IsZero() {
		out.CertNotAfterMs = r.CertNotAfter.UnixMilli()
	}
	return out
}

func fromPort(p ports.RemoteCheckReport) Report {
	out := Report{Node: p.Node, Result: p.Result, Class: p.Class, CredentialVersion: p.CredentialVersion, TargetID: p.TargetID,
		TargetServesIDs: p.TargetServesIDs, RTTMs: p.RTTMs, Warnings: p.Warnings, Capable1000: p.Capable1000,
		Posture: Posture{SecurityEnabled: p.SecurityEnabled, RaftTLS: p.RaftTLS, APIHopEncrypted: p.APIHopEncrypted}}
	if p.CertNotAfterMs != 0 {
		out.CertNotAfter = msToTime(p.CertNotAfterMs)
	}
	return out
}
