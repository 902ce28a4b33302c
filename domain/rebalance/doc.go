// Package rebalance is the leader's move planner (internals.md §11.2): a
// pure function from the cluster's members, topics and assignment rows to
// the moves to start now. It balances the partitions of alive owners over
// the alive, non-draining members, moves only the surplus of each node,
// counts a partition in flight at its destination so that planning with
// moves in flight reaches a fixed point, never sends a partition to a
// draining or dead node, never moves a dead owner's partition, and keeps
// the number of moves in flight within a bound. Anti-affinity between a
// fan-out child's partition and its parent's same partition only breaks
// ties.
//
// Like every domain package it performs no I/O and reads no clock.
package rebalance
