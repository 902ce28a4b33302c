// Package orphans is the startup orphan sweep (internals.md §9.8): topic
// directories left on disk by deleted incarnations (a purge missed while the
// node was down, a quarantine set aside at open) are reclaimed, each only
// after the Raft leader confirms that incarnation is gone. Anything the
// leader cannot confirm is kept and asked about again on the next pass.
package orphans
