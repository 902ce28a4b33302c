// Package topics owns topic administration (api.md §2.4-2.9.1): create,
// list, describe, alter, delete and schema history, fan-out attach, detach
// and the children listing with its lag (§2.10-2.12), the first placement of a
// topic's partitions, the purge of this node's data after a delete, and the
// worker that keeps every node's retention settings in step with metadata.
//
// It proposes metadata entries through ports.MetadataStore and reads the
// local replica; it touches partition data only through ports.PartitionLogs
// and destroys data only after the leader confirmed the incarnation is gone
// (application/leaderconfirm). It must never open a file or a socket, import
// an adapter, or stamp a time that does not come from ports.Clock.
package topics
