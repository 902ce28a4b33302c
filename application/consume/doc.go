// Package consume is the consume use case on a partition's owner: the
// in-flight shard of every local partition (domain/lease), the four consume
// modes (queue, pinned, batch, replay), ack/extend/nack single and batched,
// the pump that hands records to long-polling consumers, and the offset
// committer that persists each partition's frontier and acked-ahead set
// through ports.OffsetStore (internals.md §5.1-5.4, §5.6-5.8).
//
// It reserves before it reads, never persists a lease (a crash means
// redelivery, never loss) and never opens a file or a socket itself. It
// serves partitions whose assignment names this node; with a
// ports.PeerForwarder it routes the rest to their owners (route.go,
// ack_route.go: pinned reads, replays and settles forwarded, queue consumes
// probing the other owners, 503 for a dead owner or an ack forward that
// never left, 502 for no answer), and never forwards a request that came
// from a peer (Owner). With ports.TokenPeers too, consumers waiting for
// other owners' records leave delivery tokens with them and are called
// back, and this node calls back the nodes that left tokens here, pushing
// them the record it reserved for them (tokens_requester.go,
// tokens_owner.go, tokens_push.go; internals.md §5.5). Without a
// forwarder, a request for another owner's partition answers
// domain.ErrNotOwner.
//
// # Benchmarks
//
// go test ./application/consume -run '^$' -bench ReserveAck -benchtime 2s -count 3
// on a 2-core AMD EPYC VM shared with other builds, over the in-memory
// fakes: one pinned reserve (with its read) plus one ack, 1,024 leases in
// flight on one partition:
//
//	BenchmarkReserveAck  19.7-33.4 µs/op  30k-51k reserve+ack/s  2.7 KiB/op  57 allocs/op
//
// About a third of the time is domain/lease's Reserve walking the 1,024
// leased offsets above the frontier one map lookup each; another quarter is
// the fake metastore decoding the topic and assignment rows on every call.
package consume
