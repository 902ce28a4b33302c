// Package shipping is the sender at the end of a remote child's fan-out
// cursors (internals.md §7.2-§7.5): it splits each slab into lanes by key,
// sends each lane's records in chunks to the target's batch produce route
// through the remote's cached client, reads every answer with the
// classifier of domain/remote, and answers the cursor only once every
// record is accepted (or skipped by an admin), so the cursor never
// advances past a record the target does not hold.
//
// It keeps, per remote on this node, the gate, the request slots and what
// the capability probe learned, and per cursor its link state, the record
// it is stuck on and its lanes' pacing. No state moves a cursor: a stall
// only waits. It orchestrates ports; it never opens a socket itself.
package shipping
