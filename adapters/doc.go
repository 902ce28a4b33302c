// Package adapters is the ring of I/O: one package per technology, each
// implementing ports (wal, segmentlog, vfs, metastore, quicpeer, httpapi,
// telemetry) plus fake, the in-memory fakes use-case tests run against.
package adapters
