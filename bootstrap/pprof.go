package bootstrap

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"

	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/narad/narad/bootstrap/config"
)

// servePprof serves Go's profiler on http.pprof_addr when it is set
// (api.md §0.1: off by default, unauthenticated, so bind it privately).
func servePprof(lc fx.Lifecycle, cfg config.Config, log *zap.Logger) {
	if cfg.HTTP.PprofAddr == "" {
		return
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: readHeaderTimeoutMax}
	serveSide(lc, srv, "http.pprof_addr", cfg.HTTP.PprofAddr, log, "pprof listening without authentication")
}

// serveSide runs srv on a side listener at addr (configured by key) for
// the node's life, logging msg at warn level once it listens.
func serveSide(lc fx.Lifecycle, srv *http.Server, key, addr string, log *zap.Logger, msg string) {
	lc.Append(fx.Hook{
		OnStart: func(context.Context) error {
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return fmt.Errorf("listen on %s %s: %w", key, addr, err)
			}
			log.Warn(msg, zap.String("addr", ln.Addr().String()))
			go func() {
				if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
					log.Error("side listener stopped", zap.String("key", key), zap.Error(err))
				}
			}()
			return nil
		},
		OnStop: func(ctx context.Context) error { return srv.Shutdown(ctx) },
	})
}
