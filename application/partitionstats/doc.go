// Package partitionstats is the owner side of node RPC op 8,
// TopicPartitionStats (internals.md §6.3 attach point, §6.6 describe): another
// node asks this one for the storage statistics of partitions it owns. The
// answer is a peek at the local partition logs (ports.PartitionLogs.LogStats:
// it never opens or stamps a log), given only for the incarnation this node
// holds and only for partitions its metadata replica assigns to it, so a
// caller never mistakes a stale or foreign copy for the owner's numbers.
package partitionstats
