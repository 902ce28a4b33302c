package membership

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/narad/narad/application/ctxwait"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// ProbeConfig is what the empty-volume probe needs.
type ProbeConfig struct {
	// Sender carries the probe: a JoinCluster request (see ProbeForCluster).
	Sender ports.ClusterJoiner
	// Request is this node's join (its id, Raft address, an empty data
	// directory, its newest entry type).
	Request ports.JoinRequest
	// Peers are the node-RPC addresses to ask, this node's own excluded:
	// at least one per configured peer, and possibly more than one when
	// the configuration alone cannot say which a peer serves on (see
	// bootstrap's probeAddrs); an address nobody serves on is simply no
	// evidence.
	Peers []string
	Log   *slog.Logger
	// Wait pauses between rounds; nil waits on a timer (tests pass one
	// that returns at once).
	Wait func(ctx context.Context, d time.Duration) error
}

// ProbeResult says whether a peer answered for a configured cluster, which
// peer and how (for the log), and in which Raft role the join-only start
// should begin.
type ProbeResult struct {
	Found  bool
	Peer   string
	Answer string
	// AsVoter: nothing in the answer says this node is anything but a
	// voter of the configuration, so its replica should start as one.
	// False when a leader answered that it staged this node (200 staged,
	// deferred or promoted: the log stages it, which only a replica
	// started as a non-voter can apply) or refused it (409).
	//
	// Why a voter by default: an initial member is a voter of the
	// configuration its peers bootstrapped (a wiped member coming back,
	// or a member started late on a brand-new install whose peers
	// bootstrapped without it); a replica started as a non-voter that
	// replays "add voter" for itself without a staging first stays a
	// non-voter that votes but never campaigns until it restarts, and
	// two such nodes of three leave the cluster unable to elect. A 421
	// cannot tell which it is; the rare initial member the cluster does
	// not list (it would be staged by its join loop) restarts as a
	// non-voter after its replica stops on the staging (the metastore
	// records "non-voter" for every joiner, role.go).
	AsVoter bool
}

// ProbeForCluster is the empty-volume probe of an initial member
// (internals §9.2): up to 3 rounds, 1 s apart, each asking every peer at
// once with 2 s per peer, ending at the first round in which a peer
// answers for a configured cluster. The caller then starts join-only
// instead of seeding a rival configuration; when nobody does, it
// bootstraps.
//
// The probe is this node's own JoinCluster request, because only the join
// answer separates "configured" (200, 421, 409) from "no evidence of a
// cluster" (412, a node itself waiting to be admitted). What the join does
// on a leader is what the join-only start that follows a positive answer
// asks for anyway: a voter already in the configuration (a wiped initial
// member) is answered "voter" and nothing changes; an id the configuration
// lacks is staged as a non-voter.
//
// What counts as an answer:
//   - 200 (any status), 421 (a configured non-leader), 409 (tombstoned or
//     an older release): a configured cluster;
//   - a refused cluster secret (domain.ErrClusterAuth): counted too. The
//     peer is a running node (its node-RPC server starts after its Raft),
//     so most likely configured, and the two mistakes are not alike:
//     joining a cluster that does not exist leaves this node waiting and
//     retrying every 2 s, undone by fixing the secret, while seeding a
//     rival configuration can apply entries a real cluster later
//     overwrites, which nothing undoes. It is logged at error;
//   - 412 (no cluster), an unreachable or silent peer, anything else: no
//     evidence.
//
// When a round shows a cluster but no leader answered, and a 421 names the
// leader at an address the round did not ask (its node-RPC address from
// the member table, the one source that does not depend on how the peers'
// ports are configured), the probe asks that leader once before it ends:
// a leader's answer says this node's role, and only a join that reaches
// the leader makes it hand its leadership over to a voter whose volume
// was wiped (Admitter), before this node's empty replica starts.
//
// ctx ending stops the probe with no evidence found.
func ProbeForCluster(ctx context.Context, cfg ProbeConfig) ProbeResult {
	wait := cfg.Wait
	if wait == nil {
		wait = ctxwait.SleepErr
	}
	for round := 1; round <= probeRounds; round++ {
		if round > 1 && wait(ctx, probeRoundPause) != nil {
			return ProbeResult{}
		}
		if r := followLeaderHint(ctx, cfg, probeRound(ctx, cfg)); r.Found {
			if errors.Is(r.err, domain.ErrClusterAuth) {
				cfg.Log.Error("a peer refused this node's cluster secret during the empty-volume probe; counting it as a configured cluster",
					slog.String("peer", r.Peer), slog.Any("error", r.err))
			}
			return r.ProbeResult
		}
	}
	return ProbeResult{}
}

// probeAnswer is one peer's answer within a round.
type probeAnswer struct {
	ProbeResult
	err error
}

// probeRound asks every peer at once and returns the first peer, in the
// configured order, whose answer shows a configured cluster; a leader's
// answer (200 or 409) first, since only it says this node's role, then a
// 421 that names the leader (followLeaderHint may ask it).
func probeRound(ctx context.Context, cfg ProbeConfig) probeAnswer {
	answers := make([]probeAnswer, len(cfg.Peers))
	var wg sync.WaitGroup
	for i, addr := range cfg.Peers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers[i] = probePeer(ctx, cfg, addr)
		}()
	}
	wg.Wait()
	var first probeAnswer
	for _, a := range answers {
		switch {
		case a.Found && a.fromLeader():
			return a
		case a.Found && (!first.Found || first.leaderHint() == "" && a.leaderHint() != ""):
			first = a
		}
	}
	return first
}

// followLeaderHint asks the leader a non-leader's 421 named when the round
// found a cluster but no leader answered and the round did not ask that
// address; the leader's answer replaces the 421 when it shows a cluster.
func followLeaderHint(ctx context.Context, cfg ProbeConfig, a probeAnswer) probeAnswer {
	leader := a.leaderHint()
	if !a.Found || a.fromLeader() || leader == "" || slices.Contains(cfg.Peers, leader) {
		return a
	}
	if b := probePeer(ctx, cfg, leader); b.Found {
		cfg.Log.Info("asked the leader a peer named during the empty-volume probe",
			slog.String("peer", a.Peer), slog.String("leader", leader), slog.String("answer", b.Answer))
		return b
	}
	return a
}

// leaderHint is the leader address a 421 names when it may be followed,
// "" otherwise.
func (a probeAnswer) leaderHint() string {
	var nl *domain.NotLeaderError
	if !errors.As(a.err, &nl) || !validHint(nl.LeaderAddr) {
		return ""
	}
	return nl.LeaderAddr
}

// fromLeader reports whether the answer came from the leader: an
// admission or a refusal, not a 421 or an unreadable answer.
func (a probeAnswer) fromLeader() bool {
	return a.err == nil || errors.Is(a.err, domain.ErrJoinTombstoned) || errors.Is(a.err, domain.ErrOlderRelease)
}

func probePeer(ctx context.Context, cfg ProbeConfig, addr string) probeAnswer {
	ctx, cancel := context.WithTimeout(ctx, probePeerTimeout)
	defer cancel()
	a, err := cfg.Sender.Join(ctx, addr, cfg.Request)
	r := classifyProbe(a, err)
	r.Peer = addr
	return probeAnswer{ProbeResult: r, err: err}
}

// classifyProbe reads one join answer as evidence of a configured cluster
// and of this node's role in it.
func classifyProbe(a ports.JoinAdmission, err error) ProbeResult {
	switch {
	case err == nil:
		return ProbeResult{Found: true, Answer: "200 " + a.Status, AsVoter: a.Status == ports.JoinVoter}
	case errors.Is(err, domain.ErrNotMetaLeader):
		return ProbeResult{Found: true, Answer: "421 not the leader", AsVoter: true}
	case errors.Is(err, domain.ErrJoinTombstoned):
		return ProbeResult{Found: true, Answer: "409 tombstoned"}
	case errors.Is(err, domain.ErrOlderRelease):
		return ProbeResult{Found: true, Answer: "409 older release"}
	case errors.Is(err, domain.ErrClusterAuth):
		return ProbeResult{Found: true, Answer: "cluster secret refused", AsVoter: true}
	case errors.Is(err, domain.ErrNoCluster):
		return ProbeResult{Answer: "412 no cluster"}
	}
	return ProbeResult{Answer: fmt.Sprintf("no answer: %v", err)}
}
