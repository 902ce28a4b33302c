// Package metastore is the node's replica of the cluster metadata: one
// dragonboat v4 NodeHost per node (Host), able to run several Raft shards,
// with the metadata shard (shard 1) as an IOnDiskStateMachine on pebble/v2
// (Store implements ports.MetadataStore and ports.MetadataMembership).
// Entries are decoded and applied by package domain/meta, the same rules the
// in-memory fake runs; this package owns Raft, pebble and the files.
//
// It must never apply an entry it cannot decode (it stops instead), never
// read a clock or random source inside Update, and never hold the whole
// database in memory.
//
// # Format
//
// The state machine lives in <data>/fsm/shard-1/: CURRENT names the live
// pebble directory (db-NNNNNN). View keys are laid out by domain/meta;
// "\x00sm/applied-index" holds the newest applied Raft index (8 bytes,
// big-endian) and "\x00sm/newest-type" the newest entry type ever applied
// (1 byte), both written with the batch they describe. A snapshot stream is "NMSNAP01", then every key as
// u32 key length | u32 value length | key | value, then a trailer
// u32 0 | u32 0 | u64 record count | u32 CRC-32C of the records.
// Dragonboat keeps its Raft log in <data>/raft/.
//
// # Crash safety
//
//   - Each Update batch writes its views, its history entries and the
//     applied index in one synced pebble batch. Open returns that index, so
//     replay skips every entry the database holds (story F26): no entry is
//     applied twice, and a refused entry cannot succeed on one replica's
//     replay.
//   - An entry of an unknown format version or entry type, corrupt bytes, or
//     a failed write makes Update return ErrEntryNotApplicable; dragonboat
//     then halts the process (fail-stop). Nothing of that batch is written,
//     so a restart meets the entry again (and stops again) until the binary
//     is upgraded. A commit the disk refuses is first retried (100 ms
//     doubling to 5 s, for up to 30 s, logged once).
//   - A database or snapshot that applied an entry type newer than this
//     build applies is refused (ErrNewerDatabase): OpenMetadata returns it
//     before Raft starts; an install refuses it as its first record streams
//     by, leaving the live database in place (dragonboat then halts the
//     node, as for an entry it cannot apply).
//   - A snapshot installs into a fresh directory, is checked (count and
//     CRC-32C), synced, renamed, and only then named by CURRENT (temp file,
//     fsync, rename, fsync dir); leftovers are removed at the next open.
//   - A state machine that applied entries but has no Raft state beside it
//     is never served: a bootstrapping node refuses to start
//     (ErrStaleState), a joiner sets it aside as shard-1.stale-<ns> and
//     rebuilds from the leader.
//   - Snapshots stream from a pebble snapshot through a 64 KiB buffer and
//     install in 4 MiB batches: memory does not grow with the database.
//
// # Freshness
//
// Barrier is a ReadIndex (dragonboat SyncRead) retried within 5 s: on the
// leader it waits until the leader's own state machine applied its commit
// index; on a follower until local apply reached the leader's. CaughtUp is
// true while a leader is known and a 1 s read probe succeeded within 5 s.
// Dragonboat refuses to campaign while a replica's committed index is ahead
// of its applied index, but a leader's apply still trails its commits (right
// after an election, under load): every "my state is authority" decision
// goes through application/leaderconfirm, which passes Barrier first.
//
// # Cluster formation
//
// A replica with Raft state restarts from it. A fresh node with no member
// list bootstraps a one-member cluster; one listed in InitialMembers
// bootstraps with those peers; any other fresh node is join-only and waits
// for the leader to add it (application/membership decides voter or
// non-voter; a non-voter starts with StoreConfig.NonVoter).
//
// # Transport
//
// Without TLS files Raft runs over dragonboat's plaintext TCP transport.
// With all three (HostConfig.TLSCertFile, TLSKeyFile, TLSCAFile; internals
// §12.3) the NodeHost is configured for mutual TLS and runs this package's
// TLS transport (raft_transport.go): TLS 1.3, each side verifying the
// other's certificate against the CA bundle and the name
// narad-cluster.local, never the dialed address (dragonboat's TCP transport
// would check the IP). The files are read once, in NewHost, which refuses
// unreadable files, a key that does not match, or a certificate without the
// name or the serverAuth and clientAuth usages. Every node logs one
// "raft transport" line; refused handshakes log "bad certificate" errors.
//
// # Benchmarks
//
// go test -run '^$' -bench . -benchtime 2000x ./adapters/metastore/
// (AMD EPYC, 2 cores shared with other builds, loopback, 50 ms RTT; the
// open and snapshot benchmarks ran with -benchtime 3x):
//
//	ProposeApply1Node   1 in flight    2,139 proposals/s   p50 0.44 ms   p99 1.38 ms
//	ProposeApply1Node   16 in flight   4,014 proposals/s   p50 4.06 ms   p99 7.06 ms
//	ProposeApply3Nodes  1 in flight      669 proposals/s   p50 1.49 ms   p99 2.83 ms
//	ProposeApply3Nodes  16 in flight   2,520 proposals/s   p50 6.23 ms   p99 12.88 ms
//	OpenNode10kTopics   85 ms to open and list 10,000 topics locally; 624 ms
//	                    more until it leads (the election timeout); the open
//	                    store holds 2.6 MB more heap than before it opened;
//	                    0.63 MB of state machine on disk
//	SaveSnapshot10kTopics  6.0 ms and 73 KB allocated per snapshot (34 allocs)
package metastore
