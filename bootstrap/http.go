package bootstrap

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/narad/narad/adapters/httpapi"
	"github.com/narad/narad/adapters/telemetry"
	"github.com/narad/narad/bootstrap/config"
)

// readHeaderTimeoutMax bounds how long request headers may take (api.md §0.1).
const readHeaderTimeoutMax = 5 * time.Second

// httpModule serves the client API; it starts last and stops first.
var httpModule = fx.Module("http",
	fx.Provide(
		fx.Annotate(newEngine, fx.ParamTags(``, ``, ``, ``, ``, `group:"routes"`)),
	),
	fx.Invoke(serveMetricsListener, serveHTTP, servePprof),
)

// asRoutes tags a route-group constructor for the engine.
func asRoutes(f any) any {
	return fx.Annotate(f, fx.ResultTags(`group:"routes,flatten"`))
}

func newEngine(cfg config.Config, log *zap.Logger, m *telemetry.Metrics, r *Readiness, sec httpapi.Security, groups []httpapi.Route) http.Handler {
	routes := httpapi.HealthRoutes(r)
	if cfg.HTTP.MetricsAddr == "" { // else /metrics is served on its own listener only
		routes = append(routes, httpapi.MetricsRoute(m.Registry))
	}
	routes = append(routes, groups...)
	return httpapi.NewEngineWith(httpapi.EngineOptions{Log: log, Metrics: m, Security: sec}, routes...)
}

func serveHTTP(lc fx.Lifecycle, cfg config.Config, h http.Handler, r *Readiness, m *telemetry.Metrics, log *zap.Logger, boot BootTime) {
	srv := &http.Server{
		Handler:           h,
		ReadTimeout:       cfg.HTTP.ReadTimeout.D(),
		ReadHeaderTimeout: min(cfg.HTTP.ReadTimeout.D(), readHeaderTimeoutMax),
		WriteTimeout:      cfg.HTTP.WriteTimeout.D(),
		IdleTimeout:       cfg.HTTP.IdleTimeout.D(),
		// The exact cap is the listener's (headMeter: request line through
		// the empty line ending the header fields, CRLFs included; exactly
		// the cap passes, one byte more is 431). net/http's own check, at
		// the cap plus its slack, only backs it up, and answers the 431
		// the meter provokes.
		MaxHeaderBytes: cfg.HTTP.MaxHeaderBytes,
		ErrorLog:       zap.NewStdLog(log.Named("http")),
	}
	lc.Append(fx.Hook{
		OnStart: func(context.Context) error {
			ln, err := clientListenConfig.Listen(context.Background(), "tcp", cfg.HTTP.Addr)
			if err != nil {
				return fmt.Errorf("listen on http.addr %s: %w", cfg.HTTP.Addr, err)
			}
			ln = limitConnections(ln, cfg.HTTP.MaxConnections, cfg.HTTP.MaxHeaderBytes)
			m.BootSeconds.Set(time.Since(time.Time(boot)).Seconds())
			log.Info("http listening", zap.String("addr", ln.Addr().String()))
			go func() {
				if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
					log.Error("http server stopped", zap.Error(err))
				}
			}()
			return nil
		},
		OnStop: func(ctx context.Context) error {
			r.shutdown()
			grace, cancel := context.WithTimeout(ctx, cfg.HTTP.ShutdownGrace.D())
			defer cancel()
			if err := srv.Shutdown(grace); err != nil {
				log.Warn("http drain cut short by the shutdown grace", zap.Error(err))
				return srv.Close()
			}
			return nil
		},
	})
}

// clientListenConfig turns TCP keep-alive off on client connections. Go
// sets it on every accepted connection by default, four setsockopt calls
// each; with Go's default client transport, which keeps only two idle
// connections per host, a busy client opens a new connection for about one
// request in four, so those calls were a measurable part of a request's
// cost. They bought nothing here: http.idle_timeout (60 s by default,
// always set) closes an idle connection before Go's probes (the first after
// 15 s idle, then nine more 15 s apart) would declare its client dead, and
// a request in progress is bounded by the read and write timeouts.
var clientListenConfig = net.ListenConfig{KeepAlive: -1}

// BootTime is when the process began to start.
type BootTime time.Time
