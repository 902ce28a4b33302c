// Package lease holds the in-flight shard of one partition: which offsets are
// leased to consumers, which are acked ahead of the committed frontier, and
// the rules that pick the next offset to hand out (internals.md §5.1-5.3).
// It also holds offsets out of delivery for a while: a nack with a delay
// (Defer), and with a redelivery Backoff set a plain nack or a lapsed lease,
// for a wait that grows with the offset's delivery count (backoff.go).
// It is pure: the caller passes the time, the high watermark and a seed for
// the nonce stream (which also draws the backoff's jitter), and serialises
// calls on one shard.
package lease
