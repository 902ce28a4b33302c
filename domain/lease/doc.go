// Package lease holds the in-flight shard of one partition: which offsets are
// leased to consumers, which are acked ahead of the committed frontier, and
// the rules that pick the next offset to hand out (internals.md §5.1-5.3).
// It is pure: the caller passes the time, the high watermark and a seed for
// the nonce stream, and serialises calls on one shard.
package lease
