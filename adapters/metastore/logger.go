package metastore

import (
	"fmt"
	"sync"
	"sync/atomic"

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
	if l.enabled(logger.WARNING) {
		l.z().Warn(fmt.Sprintf(format, args...))
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
