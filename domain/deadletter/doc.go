// Package deadletter holds the pure rules of dead letters (issue 19,
// docs/api-extensions.md): a topic's dead-letter policy, the per-partition
// table of receive counts with the records that make it durable, and the
// envelope a dead letter carries its origin in. It does no I/O: the caller
// persists the records the table hands out before it acts on them.
package deadletter
