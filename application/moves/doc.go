// Package moves owns the partition moves of the cluster (internals.md
// §11): the runner that brings every move the leader targets at this node
// to its flip (copy while the source serves, freeze, copy until quiet,
// fence, install, CompleteMove), and the operator's abort of a planned
// move (api.md §2.17). The leader's planner lives in application/controller
// over domain/rebalance; the copy and the install are the partition log's
// (ports.PartitionTransfer, ports.PartitionInstaller).
package moves
