package bootstrap

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"time"

	"go.uber.org/zap"

	"github.com/narad/narad/adapters/telemetry"
	"github.com/narad/narad/bootstrap/config"
)

// RunParams is a server start as the command line asked for it.
type RunParams struct {
	Source config.Source
	// Dev prints the dev-mode banner (the command already set loopback
	// addresses, security off and text logs in Source.Flags).
	Dev    bool
	Stderr io.Writer
}

// Run loads the configuration, starts a node and serves until ctx ends,
// then shuts down gracefully (HTTP drained within the grace period, final
// flushes, WAL and frontier synced).
func Run(ctx context.Context, p RunParams) error {
	start := time.Now()
	cfg, err := config.Load(p.Source)
	if err != nil {
		return err
	}
	log, err := telemetry.NewLogger(telemetry.LogOptions{Level: cfg.Log.Level, Format: cfg.Log.Format, Output: p.Stderr})
	if err != nil {
		return err
	}
	defer log.Sync() //nolint:errcheck // best effort at exit
	applyMemoryLimit(memoryLimitEnv{getenv: os.Getenv, readFile: os.ReadFile, setLimit: debug.SetMemoryLimit}, log)
	if p.Dev {
		devBanner(p.Stderr, cfg, p.Source.Env)
	}
	app, err := NewNode(Params{Config: cfg, Log: log, Start: start})
	if err != nil {
		return startFailure(err, cfg)
	}
	startCtx, cancel := context.WithTimeout(ctx, app.StartTimeout())
	defer cancel()
	if err := app.Start(startCtx); err != nil {
		return startFailure(err, cfg)
	}
	log.Info("node started", zap.String("version", Build().Version), zap.Duration("took", time.Since(start)))
	var stoppedItself error
	select {
	case <-ctx.Done():
	case sig := <-app.Wait(): // a signal fx caught (exit code 0), or the node stopping itself
		if sig.ExitCode != 0 {
			stoppedItself = fmt.Errorf("the node stopped itself (exit code %d); its log says why", sig.ExitCode)
		}
	}
	log.Info("shutting down")
	stopCtx, cancelStop := context.WithTimeout(context.Background(), app.StopTimeout())
	defer cancelStop()
	return errors.Join(stoppedItself, app.Stop(stopCtx))
}

// devBanner says what --dev runs, and says loudly when it overrides a
// NARAD_SECURITY_ENABLED that asked for security (api.md §8.2).
func devBanner(w io.Writer, cfg config.Config, env func(string) (string, bool)) {
	if env != nil {
		if v, ok := env("NARAD_SECURITY_ENABLED"); ok {
			if on, err := strconv.ParseBool(v); err == nil && on {
				fmt.Fprintf(w, "WARNING: --dev overrides NARAD_SECURITY_ENABLED=%s: this node runs with security OFF, "+
					"no credentials are checked and every route is open to anyone who reaches it. "+
					"For a secured node run `narad serve` (or `narad server start` without --dev).\n", v)
			}
		}
	}
	fmt.Fprintf(w, "dev mode: auth OFF, bound to loopback only (http %s, raft %s, data %s)\n",
		cfg.HTTP.Addr, cfg.Cluster.Addr, cfg.Storage.DataDir)
}
