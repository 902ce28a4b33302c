package metastore

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lni/dragonboat/v4/logger"
	"go.uber.org/zap"
)

// Dragonboat's logger factory is process-global and can be set only once,
// so every Host routes dragonboat's packages to the zap logger of the most
// recently created Host.
var (
	installLogger sync.Once
	raftLog       atomic.Pointer[zap.Logger]
)

func routeDragonboatLogs(z *zap.Logger) {
	raftLog.Store(z.With(zap.String("component", "raft")))
	hostStarted.Store(time.Now().UnixNano())
	installLogger.Do(func() {
		logger.SetLoggerFactory(func(pkg string) logger.ILogger {
			return &zapRaftLogger{pkg: pkg, level: int32(logger.WARNING)}
		})
	})
}

// zapRaftLogger adapts one dragonboat package's logger to zap.
type zapRaftLogger struct {
	pkg   string
	level int32 // logger.LogLevel; higher is more verbose
}

// Without a leader, dragonboat warns once per waiting proposal or read
// every few ticks (about every 50 ms per write while a write waits out its
// 5 s budget). One such warning per leaderlessWarnEvery is kept at warn
// level; the repeats go to debug.
const leaderlessWarnEvery = 5 * time.Second

var lastLeaderlessWarn atomic.Int64 // unix nanoseconds

// A node proposes its first entries (its member record, the root account)
// while its first election is still running, so a "no leader" warning in
// the first leaderlessStartGrace after a Host starts is routine and logged
// at info; one still there after the grace is a warning again.
const leaderlessStartGrace = 10 * time.Second

var hostStarted atomic.Int64 // unix nanoseconds of the latest Host's start

// leaderlessAtStart reports whether msg is a "no leader" message logged
// within leaderlessStartGrace of the latest Host's start.
func leaderlessAtStart(msg string, now time.Time) bool {
	started := hostStarted.Load()
	return started != 0 && now.UnixNano()-started < int64(leaderlessStartGrace) && strings.Contains(msg, ", no leader")
}

// leaderlessRepeat reports whether msg is a "dropped ..., no leader"
// warning that one logged within leaderlessWarnEvery already covers.
func leaderlessRepeat(msg string, now time.Time) bool {
	if !strings.Contains(msg, ", no leader") || !strings.Contains(msg, "dropped ") {
		return false
	}
	last := lastLeaderlessWarn.Load()
	if last != 0 && now.UnixNano()-last < int64(leaderlessWarnEvery) {
		return true
	}
	return !lastLeaderlessWarn.CompareAndSwap(last, now.UnixNano())
}

// routineElection reports whether msg is one of the warnings dragonboat
// logs on every ordinary start: its config package's plaintext notice
// (logTransport says it better, knowing the address) and its advice on our
// election and heartbeat ticks, and its raft
// package's election steps (a node starting a pre-vote or a vote, counting
// the answers, changing role). An operator should read them as info, not
// as something to act on. Anything else stays a warning.
func routineElection(msg string) bool {
	for _, s := range routineElectionMessages {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

var routineElectionMessages = []string{
	"mutual TLS disabled, communication is insecure", // logTransport says it, knowing the address
	// Its config package's advice on the timing we chose on purpose: an
	// election after 10 ticks, a heartbeat every 2 (constants.go).
	"ElectionRTT is not a magnitude larger than HeartbeatRTT",
	" became PreVote candidate", " became candidate", " became leader", " became follower",
	" received RequestPreVoteResp ", " received RequestVoteResp ",
	// A cluster's first election, as every member logs it.
	" sent RequestPreVote to ", " sent RequestVote to ", " cast preVote from ", " cast vote from ",
	" received RequestVote with higher term ", " received Heartbeat with higher term ",
	" become followerKE after receiving higher term ", " preVotes and 0 rejections", " votes and 0 rejections",
}

func (l *zapRaftLogger) SetLevel(level logger.LogLevel) { atomic.StoreInt32(&l.level, int32(level)) }

func (l *zapRaftLogger) enabled(level logger.LogLevel) bool {
	return int32(level) <= atomic.LoadInt32(&l.level)
}

func (l *zapRaftLogger) z() *zap.Logger { return raftLog.Load().With(zap.String("pkg", l.pkg)) }

func (l *zapRaftLogger) Debugf(format string, args ...any) {
	if l.enabled(logger.DEBUG) {
		l.z().Debug(fmt.Sprintf(format, args...))
	}
}

func (l *zapRaftLogger) Infof(format string, args ...any) {
	if l.enabled(logger.INFO) {
		l.z().Info(fmt.Sprintf(format, args...))
	}
}

func (l *zapRaftLogger) Warningf(format string, args ...any) {
	if !l.enabled(logger.WARNING) {
		return
	}
	msg := fmt.Sprintf(format, args...)
	now := time.Now()
	switch {
	case leaderlessAtStart(msg, now):
		l.z().Info(msg)
	case leaderlessRepeat(msg, now):
		l.z().Debug(msg)
	case routineElection(msg):
		l.z().Info(msg)
	default:
		l.z().Warn(msg)
	}
}

func (l *zapRaftLogger) Errorf(format string, args ...any) {
	if l.enabled(logger.ERROR) {
		l.z().Error(fmt.Sprintf(format, args...))
	}
}

// Panicf logs and panics: dragonboat calls it when it must halt.
func (l *zapRaftLogger) Panicf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	l.z().Error(msg, zap.Bool("halt", true))
	panic(msg)
}
