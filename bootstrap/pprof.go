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
	lc.Append(fx.Hook{
		OnStart: func(context.Context) error {
			ln, err := net.Listen("tcp", cfg.HTTP.PprofAddr)
			if err != nil {
				return fmt.Errorf("listen on http.pprof_addr %s: %w", cfg.HTTP.PprofAddr, err)
			}
			log.Warn("pprof listening without authentication", zap.String("addr", ln.Addr().String()))
			go func() {
				if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
					log.Error("pprof server stopped", zap.Error(err))
				}
			}()
			return nil
		},
		OnStop: func(ctx context.Context) error { return srv.Shutdown(ctx) },
	})
}
