package telemetry

import (
	"fmt"
	"io"
	"os"
	"strings"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// LogOptions configure the process logger.
type LogOptions struct {
	Level  string    // debug | info | warn | error
	Format string    // json | text
	Output io.Writer // default os.Stderr
}

// NewLogger builds the process logger: JSON lines, or human-readable text.
func NewLogger(o LogOptions) (*zap.Logger, error) {
	var level zapcore.Level
	if err := level.UnmarshalText([]byte(strings.ToLower(o.Level))); err != nil {
		return nil, fmt.Errorf("telemetry: log level %q: %w", o.Level, err)
	}
	encCfg := zap.NewProductionEncoderConfig()
	encCfg.TimeKey = "ts"
	encCfg.EncodeTime = zapcore.ISO8601TimeEncoder
	var enc zapcore.Encoder
	switch o.Format {
	case "json", "":
		enc = zapcore.NewJSONEncoder(encCfg)
	case "text":
		encCfg.EncodeLevel = zapcore.CapitalLevelEncoder
		enc = zapcore.NewConsoleEncoder(encCfg)
	default:
		return nil, fmt.Errorf("telemetry: log format %q: want json or text", o.Format)
	}
	out := o.Output
	if out == nil {
		out = os.Stderr
	}
	core := zapcore.NewCore(enc, zapcore.Lock(zapcore.AddSync(out)), level)
	return zap.New(core, zap.AddCaller()), nil
}
