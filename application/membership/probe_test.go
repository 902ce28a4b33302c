package membership_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/narad/narad/application/membership"
	"github.com/narad/narad/domain"
)

var (
	down      = answer{err: errDown}
	noCluster = answer{err: fmt.Errorf("412: %w", domain.ErrNoCluster)}
)

// probeRig runs the probe over a fake sender with a wait that records the
// pauses instead of sleeping.
type probeRig struct {
	send   *fakeSender
	logs   *logBuffer
	mu     sync.Mutex
	pauses []time.Duration
}

func (r *probeRig) run(ctx context.Context, peers ...string) membership.ProbeResult {
	req := joinReq("n3")
	req.DataDirEmpty = true
	return membership.ProbeForCluster(ctx, membership.ProbeConfig{
		Sender: r.send, Request: req, Peers: peers, Log: slog.New(slog.NewTextHandler(r.logs, nil)),
		Wait: func(ctx context.Context, d time.Duration) error {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.pauses = append(r.pauses, d)
			return ctx.Err()
		},
	})
}

func newProbeRig(send *fakeSender) *probeRig { return &probeRig{send: send, logs: &logBuffer{}} }

// Ensure that the empty-volume probe (internals §9.2) decides per the
// peers' answers: nobody reachable or only 412s mean bootstrap after 3
// rounds 1 s apart; a 421, a 200, a 409 or a refused secret mean join-only,
// at the first round that shows it (a later round's answer counts too); the
// replica starts as a voter unless a leader staged or refused this node.
func TestProbeForClusterDecidesFromAnswers(t *testing.T) {
	t.Parallel()
	tombstoned := answer{err: fmt.Errorf("409: %w", domain.ErrJoinTombstoned)}
	olderRelease := answer{err: fmt.Errorf("409: %w", domain.ErrOlderRelease)}
	secretRefused := answer{err: fmt.Errorf("%w: handshake", domain.ErrClusterAuth)}
	cases := []struct {
		name   string
		script map[string][]answer
		found  bool
		voter  bool
		peer   string
		rounds int
	}{
		{name: "all_unreachable_bootstraps", script: nil, rounds: 3},
		{name: "all_412_bootstraps", script: map[string][]answer{"p1": {noCluster}, "p2": {noCluster}}, rounds: 3},
		{name: "one_421_joins", script: map[string][]answer{"p1": {noCluster}, "p2": {hint("")}}, found: true, voter: true, peer: "p2", rounds: 1},
		{name: "leader_200_joins", script: map[string][]answer{"p1": {admitted("voter")}}, found: true, voter: true, peer: "p1", rounds: 1},
		{name: "leader_staged_joins_as_non_voter", script: map[string][]answer{"p2": {admitted("staged")}}, found: true, peer: "p2", rounds: 1},
		{name: "leader_deferred_joins_as_non_voter", script: map[string][]answer{"p2": {admitted("deferred")}}, found: true, peer: "p2", rounds: 1},
		{name: "leader_answer_outranks_421", script: map[string][]answer{"p1": {hint("p2:1")}, "p2": {admitted("staged")}}, found: true, peer: "p2", rounds: 1},
		{name: "tombstoned_409_joins", script: map[string][]answer{"p2": {tombstoned}}, found: true, peer: "p2", rounds: 1},
		{name: "older_release_409_joins", script: map[string][]answer{"p2": {olderRelease}}, found: true, peer: "p2", rounds: 1},
		{name: "refused_secret_joins", script: map[string][]answer{"p1": {secretRefused}}, found: true, voter: true, peer: "p1", rounds: 1},
		{name: "answer_on_round_3_joins", script: map[string][]answer{"p1": {down, down, hint("")}}, found: true, voter: true, peer: "p1", rounds: 3},
		{name: "412_then_421_joins", script: map[string][]answer{"p2": {noCluster, hint("")}}, found: true, voter: true, peer: "p2", rounds: 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			send := newSender()
			for addr, as := range tc.script {
				send.on(addr, as...)
			}
			r := newProbeRig(send)
			got := r.run(context.Background(), "p1", "p2")
			if got.Found != tc.found || got.AsVoter != tc.voter || (tc.found && got.Peer != tc.peer) {
				t.Fatalf("probe = %+v, want found=%v as voter=%v via %q", got, tc.found, tc.voter, tc.peer)
			}
			if n := send.count(); n != 2*tc.rounds {
				t.Fatalf("asked %d times, want %d (2 peers x %d rounds)", n, 2*tc.rounds, tc.rounds)
			}
			if len(r.pauses) != tc.rounds-1 || (len(r.pauses) > 0 && r.pauses[0] != time.Second) {
				t.Fatalf("pauses %v, want %d of 1s", r.pauses, tc.rounds-1)
			}
			if !send.request.DataDirEmpty || send.request.NodeID != "n3" {
				t.Fatalf("probe sent %+v, want this node's empty-volume join", send.request)
			}
		})
	}
}

// Ensure that a refused cluster secret is logged at error when it decides
// the probe (an operator must fix it), and that a probe whose context ends
// between rounds reports nothing found.
func TestProbeLogsRefusedSecretAndStopsWithContext(t *testing.T) {
	t.Parallel()
	r := newProbeRig(newSender().on("p1", answer{err: fmt.Errorf("%w: proof", domain.ErrClusterAuth)}))
	if got := r.run(context.Background(), "p1"); !got.Found {
		t.Fatalf("refused secret: %+v", got)
	}
	if r.logs.count("level=ERROR") != 1 || r.logs.count("refused this node's cluster secret") != 1 {
		t.Fatalf("want one error line naming the secret; logs: %s", r.logs.b.String())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r = newProbeRig(newSender())
	if got := r.run(ctx, "p1"); got.Found || r.send.count() != 1 {
		t.Fatalf("cancelled probe = %+v after %d asks, want nothing found after round 1", got, r.send.count())
	}
}

// Ensure that each peer gets at most 2 s per round (internals §9.2): a
// peer that never answers does not hold the round longer.
func TestProbeBoundsEachPeer(t *testing.T) {
	t.Parallel()
	var got time.Duration
	send := deadlineSender(func(d time.Duration) { got = d })
	membership.ProbeForCluster(context.Background(), membership.ProbeConfig{
		Sender: send, Request: joinReq("n3"), Peers: []string{"p1"}, Log: slog.New(slog.NewTextHandler(&logBuffer{}, nil)),
		Wait: func(context.Context, time.Duration) error { return context.Canceled },
	})
	if got <= 0 || got > 2*time.Second {
		t.Fatalf("peer deadline %v, want within 2s", got)
	}
}

// Ensure that a round that reached only non-leaders asks the leader a 421
// names at an address the round did not ask (the member table's node-RPC
// address, however the peers' ports are laid out), once, and takes its
// answer: the leader's join is what says this node's role and what makes
// it hand its leadership over to a wiped voter. A 421 naming a peer the
// round asked, an invalid address or a leader that does not answer leaves
// the 421 as the verdict.
func TestProbeFollowsALeaderHint(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		script map[string][]answer
		peer   string
		voter  bool
		asked  int
	}{
		{name: "leader_named_elsewhere_answers", script: map[string][]answer{"p1:1": {hint("h:7")}, "h:7": {admitted("staged")}}, peer: "h:7", asked: 3},
		{name: "leader_named_elsewhere_says_voter", script: map[string][]answer{"p2:1": {hint("h:7")}, "h:7": {admitted("voter")}}, peer: "h:7", voter: true, asked: 3},
		{name: "hinted_421_outranks_silent_421", script: map[string][]answer{"p1:1": {hint("")}, "p2:1": {hint("h:7")}, "h:7": {admitted("staged")}}, peer: "h:7", asked: 3},
		{name: "leader_named_elsewhere_silent", script: map[string][]answer{"p1:1": {hint("h:7")}}, peer: "p1:1", voter: true, asked: 3},
		{name: "leader_named_among_peers_not_asked_twice", script: map[string][]answer{"p1:1": {hint("p2:1")}}, peer: "p1:1", voter: true, asked: 2},
		{name: "invalid_hint_not_followed", script: map[string][]answer{"p1:1": {hint("h:0")}}, peer: "p1:1", voter: true, asked: 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			send := newSender()
			for addr, as := range tc.script {
				send.on(addr, as...)
			}
			r := newProbeRig(send)
			got := r.run(context.Background(), "p1:1", "p2:1")
			if !got.Found || got.Peer != tc.peer || got.AsVoter != tc.voter {
				t.Fatalf("probe = %+v, want found via %q as voter=%v", got, tc.peer, tc.voter)
			}
			if n := send.count(); n != tc.asked || len(r.pauses) != 0 {
				t.Fatalf("asked %d times over %d pauses, want %d asks in one round", n, len(r.pauses), tc.asked)
			}
		})
	}
}
