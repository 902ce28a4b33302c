// Package httpfloor measures what Go's net/http server costs a node per
// request before any handler work: a process serving a handler that only
// drains a 256-byte body and answers 202, loaded by net/http clients with
// the default transport, as `narad bench` loads a node. Its one test is a
// measuring tool, off unless NARAD_E2E_BENCH_HTTPFLOOR=1
// (docs/performance.md, "Where a message's CPU goes at 1,000 msg/s").
package httpfloor
