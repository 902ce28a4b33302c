// Package telemetry builds the process's observability: the zap logger (JSON
// by default, console text with --dev) and the Prometheus registry with the
// narad_* metrics of api.md §7. It never decides anything; it records.
package telemetry
