package bootstrap

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/narad/narad/adapters/cursorfile"
	"github.com/narad/narad/adapters/offsetstore"
	"github.com/narad/narad/adapters/segmentlog"
	"github.com/narad/narad/adapters/telemetry"
	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/adapters/wal"
	"github.com/narad/narad/bootstrap/config"
	"github.com/narad/narad/ports"
)

// storageModule opens the ingress WAL (replaying it) and the partition logs.
var storageModule = fx.Module("storage",
	fx.Provide(
		newWAL,
		fx.Annotate(func(w *wal.WAL) ports.IngressWAL { return w }),
		newPartitionLogs,
		fx.Annotate(func(s *segmentlog.Store) ports.PartitionLogs { return s }),
		func(s *segmentlog.Store) ports.MoveMarkers { return s },
		func(s *segmentlog.Store) ports.PartitionSchedule { return s },
	),
)

// walOptions is the ingress WAL's option set from the configuration.
func walOptions(cfg config.Config) wal.Options {
	return wal.Options{
		FS:       vfs.OS{},
		Dir:      filepath.Join(cfg.Storage.DataDir, "ingress", "produce"),
		Prealloc: cfg.Storage.IngressWALPrealloc,
	}
}

func newWAL(lc fx.Lifecycle, cfg config.Config, log *zap.Logger) (*wal.WAL, error) {
	opts := walOptions(cfg)
	dir := opts.Dir
	start := time.Now()
	w, err := wal.Open(opts)
	if err != nil {
		return nil, fmt.Errorf("open ingress WAL: %w", err)
	}
	log.Info("ingress WAL open", zap.String("dir", dir), zap.Uint64("next_seq", w.DurableNext()),
		zap.Uint64("checkpoint", w.Checkpoint()), zap.Duration("took", time.Since(start)),
		zap.String("sync", vfs.SyncMethod()))
	lc.Append(fx.StopHook(w.Close))
	return w, nil
}

func newPartitionLogs(lc fx.Lifecycle, cfg config.Config, log *zap.Logger, m *telemetry.Metrics) (*segmentlog.Store, error) {
	opts := segmentlog.DefaultOptions(vfs.OS{}, cfg.Storage.DataDir)
	var err error
	if opts.Codec, err = segmentlog.ParseCodec(cfg.Storage.Codec); err != nil {
		return nil, err
	}
	if opts.Level, err = segmentlog.ParseLevel(cfg.Storage.CompressionLevel); err != nil {
		return nil, err
	}
	opts.IdleEviction = time.Duration(cfg.Storage.IdleLogEvictionMs) * time.Millisecond
	opts.Logger = newSlog(log.With(zap.String("component", "storage")))
	opts.Observer = m.Storage()
	opts.VerifySide = verifySideFile
	s, err := segmentlog.Open(opts)
	if err != nil {
		return nil, fmt.Errorf("open partition logs: %w", err)
	}
	lc.Append(fx.StopHook(func(context.Context) error { return s.Close() }))
	return s, nil
}

// verifySideFile checks a side file a partition move carries by the
// adapter that owns its format: the acked-ahead slots (offsetstore) and the
// fan-out cursors (cursorfile). consumer.offset is one 8-byte word, always
// whole.
func verifySideFile(name string, b []byte) error {
	switch {
	case name == "consumer.ahead":
		return offsetstore.VerifyAhead(b)
	case strings.HasPrefix(name, "fanout-"):
		return cursorfile.Verify(b)
	}
	return nil
}
