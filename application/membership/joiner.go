package membership

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// JoinView is what the join loop reads of this node's own replica.
type JoinView interface {
	// Leader returns the leader's replica id as known locally.
	Leader() (replicaID uint64, ok bool)
	// CaughtUp reports whether local apply reached the leader's commit
	// index within the last 5 s.
	CaughtUp() bool
}

// JoinerConfig are a Joiner's dependencies and this node's request.
type JoinerConfig struct {
	Sender ports.ClusterJoiner
	View   JoinView
	Clock  ports.Clock
	Log    *slog.Logger
	// Request is what every attempt sends (this node's id, Raft address,
	// whether it started empty, its newest entry type).
	Request ports.JoinRequest
	// Peers are the node-RPC addresses of the configured peers, this node
	// excluded.
	Peers []string
}

// errNoCandidates: no configured peer and no leader learned yet.
var errNoCandidates = errors.New("membership: no peer to send the join to")

// Joiner is this node's side of joining (internals §9.3): it asks the
// configured peers and the leaders it learned to admit it, following up
// to 4 leader hints per attempt, every 2 s until its own Raft sees a
// leader; once caught up it keeps asking until it is a voter. Any node
// that saw no leader for 15 s runs the loop again (Supervise). Not safe
// for concurrent use: one goroutine runs it.
type Joiner struct {
	cfg        JoinerConfig
	leaders    leaderMemory
	interval   time.Duration
	checkEvery time.Duration
	failures   int
	refused    map[error]bool // refusal kinds logged since the last admission
}

// NewJoiner returns a Joiner; it panics on a missing dependency or request.
func NewJoiner(cfg JoinerConfig) *Joiner {
	switch {
	case cfg.Sender == nil || cfg.View == nil || cfg.Clock == nil || cfg.Log == nil:
		panic("membership: joiner needs a sender, a view, a clock and a logger")
	case cfg.Request.NodeID == "" || cfg.Request.RaftAddr == "":
		panic("membership: joiner needs this node's id and raft address")
	}
	return &Joiner{cfg: cfg, interval: joinRetryInterval, checkEvery: leaderCheckInterval, refused: map[error]bool{}}
}

// Leaders returns the remembered leader addresses, most recent first.
func (j *Joiner) Leaders() []string { return append([]string(nil), j.leaders.addrs...) }

// Supervise runs the join loop at once when joinFirst (a join-only node),
// then watches this node's view of the leader: whenever it has seen none
// for 15 s it runs the loop again. It returns when ctx ends.
func (j *Joiner) Supervise(ctx context.Context, joinFirst bool) {
	if joinFirst {
		j.Run(ctx)
	}
	lastSeen := j.cfg.Clock.Now()
	tick := time.NewTicker(j.checkEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		now := j.cfg.Clock.Now()
		if j.leaderSeen() {
			lastSeen = now
			continue
		}
		if now.Sub(lastSeen) < leaderlessJoinAfter {
			continue
		}
		j.cfg.Log.Warn("no metadata leader seen; running the join loop", slog.Duration("for", now.Sub(lastSeen)))
		j.Run(ctx)
		lastSeen = j.cfg.Clock.Now()
	}
}

// Run attempts at once, then every 2 s, until an attempt finds this node a
// voter or ctx ends.
func (j *Joiner) Run(ctx context.Context) {
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		if j.Step(ctx) {
			return
		}
		timer.Reset(j.interval)
	}
}

// Step is one tick of the loop; it reports whether the loop is done. While
// this node's Raft sees no leader it asks every tick; once it sees one it
// asks again only while caught up (a staged node asking to be promoted).
// It is done when the answer is voter or promoted.
func (j *Joiner) Step(ctx context.Context) bool {
	if j.leaderSeen() && !j.cfg.View.CaughtUp() {
		return false
	}
	a, err := j.Attempt(ctx)
	if err != nil {
		j.logFailure(err)
		return false
	}
	j.failures = 0
	clear(j.refused)
	done := a.Status == ports.JoinVoter || a.Status == ports.JoinPromoted
	j.cfg.Log.Info("join answered", slog.String("status", a.Status), slog.String("reason", a.Reason),
		slog.String("leader", j.leaders.addrs[0]))
	return done
}

// leaderSeen reports whether this node's replica sees a leader. Once it
// has, the replica holds Raft state from the cluster, so later joins stop
// saying the data directory is empty: a voter that rejoined from an empty
// one and later loses sight of the leader must not make a leader hand its
// leadership over again (handover.go), nor pass for a deliberate re-add of
// a decommissioned id (readmit.go).
func (j *Joiner) leaderSeen() bool {
	_, ok := j.cfg.View.Leader()
	if ok {
		j.cfg.Request.DataDirEmpty = false
	}
	return ok
}

// Attempt walks the remembered leaders, then the configured peers, asking
// each to admit this node; a 421 naming a leader is followed at once (at
// most 4 per attempt, each a valid host:port, each asked once). The first
// admission ends it, and so does a 409 (the leader's refusal stands).
// Otherwise it returns the last error.
func (j *Joiner) Attempt(ctx context.Context) (ports.JoinAdmission, error) {
	hints := joinHintsPerAttemptMax
	asked := map[string]bool{}
	last := errNoCandidates
	for _, addr := range j.leaders.candidates(j.cfg.Peers) {
		for addr != "" && !asked[addr] && ctx.Err() == nil {
			asked[addr] = true
			a, err := j.ask(ctx, addr)
			switch {
			case err == nil:
				j.leaders.remember(addr)
				return a, nil
			case errors.Is(err, domain.ErrJoinTombstoned), errors.Is(err, domain.ErrOlderRelease):
				return ports.JoinAdmission{}, err
			}
			last = err
			addr = j.follow(err, asked, &hints)
		}
	}
	if ctx.Err() != nil {
		return ports.JoinAdmission{}, ctx.Err()
	}
	return ports.JoinAdmission{}, last
}

func (j *Joiner) ask(ctx context.Context, addr string) (ports.JoinAdmission, error) {
	ctx, cancel := context.WithTimeout(ctx, joinCallTimeout)
	defer cancel()
	a, err := j.cfg.Sender.Join(ctx, addr, j.cfg.Request)
	if err != nil {
		return a, fmt.Errorf("join via %s: %w", addr, err)
	}
	return a, nil
}

// follow returns the leader address a 421 named, remembered, when it may
// be followed; "" otherwise.
func (j *Joiner) follow(err error, asked map[string]bool, hints *int) string {
	var nl *domain.NotLeaderError
	if !errors.As(err, &nl) || *hints == 0 || asked[nl.LeaderAddr] || !validHint(nl.LeaderAddr) {
		return ""
	}
	*hints--
	j.leaders.remember(nl.LeaderAddr)
	return nl.LeaderAddr
}

// logFailure logs a refusal once per kind (at error: an operator must act),
// and other failures the first time and then once in 30.
func (j *Joiner) logFailure(err error) {
	for _, kind := range []error{domain.ErrJoinTombstoned, domain.ErrOlderRelease} {
		if errors.Is(err, kind) {
			if !j.refused[kind] {
				j.refused[kind] = true
				j.cfg.Log.Error("the cluster refuses to admit this node; retrying every 2s", slog.Any("error", err))
			}
			return
		}
	}
	j.failures++
	if j.failures == 1 || j.failures%joinFailureLogEvery == 0 {
		j.cfg.Log.Warn("join attempt failed; retrying every 2s", slog.Int("attempts", j.failures), slog.Any("error", err))
	}
}
