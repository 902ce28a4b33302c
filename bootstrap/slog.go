package bootstrap

import (
	"context"
	"log/slog"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// slogToZap routes a library's log/slog output into the process's zap logger.
type slogToZap struct {
	z     *zap.Logger
	attrs []zap.Field
}

func newSlog(z *zap.Logger) *slog.Logger { return slog.New(&slogToZap{z: z}) }

func (h *slogToZap) Enabled(_ context.Context, l slog.Level) bool {
	return h.z.Core().Enabled(zapLevel(l))
}

func (h *slogToZap) Handle(_ context.Context, r slog.Record) error {
	fields := append([]zap.Field(nil), h.attrs...)
	r.Attrs(func(a slog.Attr) bool {
		fields = append(fields, zap.Any(a.Key, a.Value.Any()))
		return true
	})
	if ce := h.z.Check(zapLevel(r.Level), r.Message); ce != nil {
		ce.Write(fields...)
	}
	return nil
}

func (h *slogToZap) WithAttrs(attrs []slog.Attr) slog.Handler {
	out := &slogToZap{z: h.z, attrs: append([]zap.Field(nil), h.attrs...)}
	for _, a := range attrs {
		out.attrs = append(out.attrs, zap.Any(a.Key, a.Value.Any()))
	}
	return out
}

func (h *slogToZap) WithGroup(name string) slog.Handler {
	return &slogToZap{z: h.z.Named(name), attrs: h.attrs}
}

func zapLevel(l slog.Level) zapcore.Level {
	switch {
	case l >= slog.LevelError:
		return zapcore.ErrorLevel
	case l >= slog.LevelWarn:
		return zapcore.WarnLevel
	case l >= slog.LevelInfo:
		return zapcore.InfoLevel
	}
	return zapcore.DebugLevel
}
