// Package bootstrap builds the running process: build information today, and
// the uber/fx graph (config, logging, metrics, metastore, storage, peers, use
// cases, HTTP) in boot order as the broker lands. Read it first: it is the
// table of contents of a node. It holds wiring only, never business rules.
package bootstrap
