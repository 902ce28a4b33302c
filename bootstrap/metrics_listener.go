package bootstrap

import (
	"net/http"

	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/narad/narad/adapters/httpapi"
	"github.com/narad/narad/adapters/telemetry"
	"github.com/narad/narad/bootstrap/config"
)

// serveMetricsListener serves /metrics, /healthz and /readyz on
// http.metrics_addr when it is set (api.md §2.3, §10.4; conformance 161):
// without credentials, for a cluster-internal scraper. The API port then
// answers /metrics with 404 (newEngine leaves the route out). It starts
// before the API listener and stops after it.
func serveMetricsListener(lc fx.Lifecycle, cfg config.Config, m *telemetry.Metrics, r *Readiness, log *zap.Logger) {
	if cfg.HTTP.MetricsAddr == "" {
		return
	}
	routes := append(httpapi.HealthRoutes(r), httpapi.MetricsRoute(m.Registry))
	srv := &http.Server{
		Handler:           httpapi.NewEngineWith(httpapi.EngineOptions{Log: log}, routes...),
		ReadHeaderTimeout: readHeaderTimeoutMax,
		MaxHeaderBytes:    cfg.HTTP.MaxHeaderBytes,
		ErrorLog:          zap.NewStdLog(log.Named("metrics-http")),
	}
	serveSide(lc, srv, "http.metrics_addr", cfg.HTTP.MetricsAddr, log, "metrics listening without authentication")
}
