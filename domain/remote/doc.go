// Package remote holds the rules of the remote-replication send path
// (internals.md §7.2-§7.4, api.md §5.8): how a slab is split into lanes and
// chunks, how each record is encoded for the target's batch produce
// (api.md §2.13.1), how a target's answer is classified into an action and
// a link state, the worst-first order of link states and check classes, and
// the per-remote gate and per-lane backoff.
//
// It is pure: no I/O, no goroutines, no clock and no global randomness. The
// caller passes the time and a jitter in [0,1), and serialises calls on one
// Gate or LaneBackoff.
package remote
