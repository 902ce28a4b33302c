// Package moves owns the partition moves of the cluster (internals.md §11):
// for now the operator's abort of a planned move (api.md §2.17), a
// compare-and-set on the assignment's target that leaves the partition
// with its owner.
package moves
