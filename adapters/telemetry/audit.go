package telemetry

import (
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/narad/narad/ports"
)

var _ ports.AuditLog = (*Audit)(nil)

// Audit writes the audit log (internals.md §12.4): one line per
// security-relevant event on its own logger, component=audit, at info
// level whatever log.level says (an operator who turns logs down to warn
// keeps the audit trail).
type Audit struct{ log *zap.Logger }

// NewAudit returns the audit log on base's output.
func NewAudit(base *zap.Logger) *Audit {
	core := base.Core()
	l := zap.New(alwaysInfo{core}).With(zap.String("component", "audit"))
	return &Audit{log: l}
}

// Record writes one line; empty fields are left out.
func (a *Audit) Record(e ports.AuditEvent) {
	fields := make([]zap.Field, 0, 8)
	fields = append(fields, zap.String("event", e.Event), zap.String("outcome", e.Outcome))
	for _, f := range [...]struct{ k, v string }{{"actor", e.Actor}, {"subject", e.Subject}, {"reason", e.Reason}, {"remote", e.Remote},
		{"request_id", e.RequestID}} {
		if f.v != "" {
			fields = append(fields, zap.String(f.k, f.v))
		}
	}
	if e.Leader {
		fields = append(fields, zap.Bool("leader", true))
	}
	a.log.Info("audit", fields...)
}

// alwaysInfo passes every entry at info or above to its core, whatever
// level the core was built with.
type alwaysInfo struct{ zapcore.Core }

func (c alwaysInfo) Enabled(l zapcore.Level) bool { return l >= zapcore.InfoLevel }

func (c alwaysInfo) With(fs []zapcore.Field) zapcore.Core { return alwaysInfo{c.Core.With(fs)} }

func (c alwaysInfo) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(e.Level) {
		return ce.AddCore(e, c)
	}
	return ce
}
