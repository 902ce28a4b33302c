// Package quicpeer is the transport of node-to-node RPC (internals.md §10.1,
// §10.2): QUIC (quic-go) with TLS 1.3, a per-stream HMAC proof of the
// cluster secret, bounded frames, one connection per peer reused across
// calls, streams pooled per lane and shared by calls matched by request
// id, and a deadline on every call; and the first operations over it
// (internals.md §3.7, §5.5, §5.9, §10.3): the commit batch (op 11) and
// several commit batches in one round trip (CommitProduceBatches, 37)
// behind ports.PeerCommitter, consume (2), ack (3), extend (18), nack
// (19) and AckBatch (32) behind ports.PeerForwarder, the
// delivery tokens TokenRegister (30) and TokenNotify (31) behind
// ports.TokenPeers, partition statistics (8) behind ports.PeerStats,
// fan-out cursor lag (17, FanoutCursors) behind ports.PeerFanoutLag, and
// JoinCluster (21) behind ports.ClusterJoiner (asked by address: a joiner
// has no member table), each with its server-side Register function over
// the use case. It never decides anything about topics or partitions (the
// use cases do), never turns a transport failure into a domain refusal, and
// never lets a request reach a handler before the stream proved the
// cluster secret. Every call failure says whether the request never left
// this node (domain.ErrNotSent: the peer did not act) or left without a
// usable answer (domain.ErrNoAnswer: the outcome is unknown).
//
// # Operation payloads
//
// Request fields follow §10.3 (big-endian integers, u32-length strings and
// bytes, one-byte bools); each operation's layout is drawn beside its codec
// (commit_codec.go, commit_group_codec.go, consume_codec.go,
// stats_codec.go, fanout_codec.go, join_codec.go, tokens.go). Every reply of these operations is
// status u16 | code string | detail string | body bytes (status.go): the
// code names the owner's domain sentinel, so the caller rebuilds the very
// error the owner's use case returned. Decoders refuse truncation, trailing
// bytes and any count a payload cannot hold before allocating for it.
//
// # Commit groups
//
// CommitBatches sends the batches the dispatcher has ready for one owner
// as one CommitProduceBatches (op 37) request: a count, then each batch's
// op-11 request as a byte string. The reply body holds, per batch and in
// request order, exactly the reply op 11 would have answered for that
// batch alone, read by the code that reads an op-11 reply, so each
// outcome keeps op 11's error classes. The owner decodes the whole request
// before committing anything (a malformed one is refused 400, nothing
// committed), then commits its batches concurrently, under the request's
// context and one commit slot. Batches that do not fit one 16 MiB frame,
// or number more than 64 (commitGroupMaxCount, which bounds the owner's
// concurrent commits per slot), go as several op-37 requests at once; a batch op 37 could not carry
// without the owner refusing the whole request (over the record cap, a
// name over the wire cap, too large for a frame of its own), and a lone
// batch, go as op 11. A transport failure of an op-37 call is repeated in
// each of its outcomes. An owner that answers op 37 with "unsupported rpc
// operation" (an older release, §10.3) gets those batches as op-11 calls
// at once, on what is left of the caller's budget, and op 11 only for 2
// min (legacyPeerMemory). Each op-37 call is observed once
// (commit_produce_batches); its batches are not.
//
// # The ack lane
//
// Forwarded acks, extends and nacks (SettleRemote) ride one lane per owner
// (acklane.go, internals.md §5.9): at most max(128, 8 × GOMAXPROCS) ack RPCs
// in flight to that owner. Below the window a record leaves at once, one
// handle as its single op (3, 18, 19) and a caller's group as one AckBatch
// (32) of up to 64; when the window is full records queue, and each freed
// slot sends the queue's head as one RPC: up to 64 records of one topic
// (the AckBatch frame names one topic; modes may mix), or a single op when
// only one is left. The caller's 2 s budget covers the queueing too; a
// record whose caller gave up while queued is dropped unsent (answered
// domain.ErrNotSent), and an RPC whose callers all gave up is cancelled.
// An owner that answers AckBatch with "unsupported rpc operation" (an
// older release, §10.3) gets that batch's records back at the queue's
// front as single ops, and single ops only for 2 min (legacyPeerMemory).
//
// The lane lives here, not in application/consume, because everything it
// decides is about the wire: which op numbers go out, the 64-record frame,
// the in-flight RPC window, and an unknown-op refusal only this transport
// can see. The port keeps its per-handle contract (ports.PeerForwarder
// SettleRemote: one outcome per handle, each exactly what its single op
// would answer), so the use case, and a client batch ack's per-owner
// group, get coalescing and the mixed-version fallback without knowing of
// either. Every RPC is observed once on the caller (ack_batch apart from
// ack); records are not.
//
// # Frame
//
// All integers big-endian. Part of the wire format and must never change.
//
//	 0       4   5   6       8               16      20
//	+-------+---+---+-------+---------------+-------+------------------------+
//	| magic |ver|typ| rsvd  | request id    | len   | payload (len bytes)    |
//	| u32   |u8 |u8 | u16=0 | u64           | u32   |                        |
//	+-------+---+---+-------+---------------+-------+------------------------+
//	magic = 0x4E525331 ("NRS1"); ver = 1; len <= 16 MiB both ways.
//	types: 3 error (payload u16 length + message), 4 ping, 5 pong,
//	       8 request (payload: op u8, then the op's fields), 9 reply,
//	       10 auth (payload: 32-byte proof), 11 cancel (no payload; the
//	       id of a request whose caller gave up).
//
// A declared length above the cap is refused before any payload byte is
// read; payloads above 64 KiB are read into a buffer that grows fourfold as
// bytes arrive, so a lying length costs only what the peer actually sent.
// The first frame of a stream is read under a 64-byte cap.
//
// # Connection
//
// TLS 1.3 with ALPN "narad-cluster-quic-v2". Each process makes an ephemeral
// self-signed ECDSA P-256 certificate when its Server starts listening,
// valid for one year and never renewed. The certificate carries no trust:
// dialers verify neither its issuer nor its dates (F37: an expired
// certificate is accepted); the proof below is the authentication. Both
// ends derive the QUIC stateless-reset key from the secret, so a restarted
// peer's resets are verifiable and drop the old connection at once.
//
// # Handshake, once per pooled stream
//
//	ekm          = TLS exporter(label "narad-cluster-auth-v1", no context, 32 bytes)
//	client proof = HMAC-SHA256(secret, "client" || ekm)
//	server proof = HMAC-SHA256(secret, "server" || ekm)
//
//	client                                   server
//	  | auth(client proof)      ------------>  |  checked before anything else;
//	  |                                        |  wrong or missing: stream reset
//	  |                                        |  (code 1), audit-logged
//	  |  <------------  auth(server proof)     |
//	  | request(id, op, fields) ------------>  |  each on its own goroutine,
//	  | request(id', ...)       ------------>  |  under a slot
//	  | cancel(id')             ------------>  |  cancels that handler only
//	  |  <------------  reply(id) | error(id)   |  in any order
//
// The exporter output differs per TLS session, so a captured proof is
// useless on any other connection. The client sends nothing after its
// proof until the server has proved the secret on that stream; then the
// stream carries requests of many calls for as long as it lives.
//
// # Calls
//
// Client.Call dials once per peer (1 s; concurrent callers share the dial;
// a failed dial makes calls to that peer fail fast for 250 ms doubling to
// 2 s) and sends the request on a stream of its op's lane (lanes.go:
// produce 16, consume 16, ack 16, control 4 streams per connection, opened
// on first use, taken round-robin); one reader per stream hands each reply
// to the call waiting for its id. A call without a deadline gets 5 s. A
// call whose context ends drops only its own waiter and sends a cancel
// frame; one that ended on its deadline also pings the peer (liveness.go).
// Beside each connection a watchdog (liveness.go) pings a peer that has sent
// no packet for 500 ms while calls are in flight, and closes the
// connection after 3 s of such silence (a peer cut off the network, not
// dead), failing its calls at once whatever their deadlines.
// A write that sent no byte leaves the stream open; a partial write, an
// unreadable frame or a reset breaks the stream, failing the calls waiting
// on it (as possibly run when their request was written whole), and the
// lane opens a new stream in its slot on next use. Server handlers run
// under two bounds of max(64, 4 × GOMAXPROCS) each (slots.go, §10.3): one
// for commits, one for acks, token frames and consume scans; long-poll
// consumes and control ops take no slot, so parked consumers cannot stop
// commits. A request whose caller gave up while waiting for a slot never
// reaches its handler. Close on either side leaves no goroutine behind.
package quicpeer
