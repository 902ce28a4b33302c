package membership

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

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
	// Peers are the node-RPC addresses of the configured peers, this node
	// excluded.
	Peers []string
	Log   *slog.Logger
	// Wait pauses between rounds; nil waits on a timer (tests pass one
	// that returns at once).
	Wait func(ctx context.Context, d time.Duration) error
}

// ProbeResult says whether a peer answered for a configured cluster, and
// which peer and how (for the log).
type ProbeResult struct {
	Found  bool
	Peer   string
	Answer string
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
// ctx ending stops the probe with no evidence found.
func ProbeForCluster(ctx context.Context, cfg ProbeConfig) ProbeResult {
	wait := cfg.Wait
	if wait == nil {
		wait = sleep
	}
	for round := 1; round <= probeRounds; round++ {
		if round > 1 && wait(ctx, probeRoundPause) != nil {
			return ProbeResult{}
		}
		if r := probeRound(ctx, cfg); r.Found {
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
// configured order, whose answer shows a configured cluster.
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
	for _, a := range answers {
		if a.Found {
			return a
		}
	}
	return probeAnswer{}
}

func probePeer(ctx context.Context, cfg ProbeConfig, addr string) probeAnswer {
	ctx, cancel := context.WithTimeout(ctx, probePeerTimeout)
	defer cancel()
	a, err := cfg.Sender.Join(ctx, addr, cfg.Request)
	found, answer := classifyProbe(a, err)
	return probeAnswer{ProbeResult: ProbeResult{Found: found, Peer: addr, Answer: answer}, err: err}
}

// classifyProbe reads one join answer as evidence of a configured cluster.
func classifyProbe(a ports.JoinAdmission, err error) (bool, string) {
	switch {
	case err == nil:
		return true, "200 " + a.Status
	case errors.Is(err, domain.ErrNotMetaLeader):
		return true, "421 not the leader"
	case errors.Is(err, domain.ErrJoinTombstoned):
		return true, "409 tombstoned"
	case errors.Is(err, domain.ErrOlderRelease):
		return true, "409 older release"
	case errors.Is(err, domain.ErrClusterAuth):
		return true, "cluster secret refused"
	case errors.Is(err, domain.ErrNoCluster):
		return false, "412 no cluster"
	}
	return false, fmt.Sprintf("no answer: %v", err)
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
