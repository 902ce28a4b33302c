// Package monitoring holds Narad's Grafana dashboard and Prometheus alert
// rules, and the tests that keep them true: promtool's rule unit tests, and
// a check that every metric they read is one a node exports (docs/metrics.md).
// It is a module of its own so that promtool stays out of the server's go.mod.
package monitoring
