// Package releasegate decides whether the cluster may be handed an entry
// type newer than the set every release applies (internals.md §8.3, the
// entry-type gate): it reads the member records and the metadata shard's
// Raft configuration and asks meta.Gate who, if anyone, holds the type
// back. Remote writes and topic writes of the newer types call it before
// they propose.
package releasegate
