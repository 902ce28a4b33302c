package quicpeer

import "time"

// Wire format (internals.md §10.1, §10.2). Part of the wire format and must
// never change: every node of a cluster, old and new, depends on each value.
const (
	// frameMagic opens every frame: "NRS1".
	frameMagic uint32 = 0x4E525331
	// frameVersion is the only frame version this transport speaks.
	frameVersion byte = 1
	// frameHeaderBytes is magic u32 | version u8 | type u8 | reserved u16 |
	// request id u64 | payload length u32.
	frameHeaderBytes = 20
	// framePayloadMaxBytes caps a payload both ways; a declared length above
	// it is refused before any byte of the payload is read or allocated.
	framePayloadMaxBytes = 16 << 20
	// proofFrameMaxBytes caps the whole first frame of a stream, read before
	// the peer is authenticated (no 16 MiB buffer for strangers).
	proofFrameMaxBytes = 64
	// proofBytes is the length of an HMAC-SHA256 proof.
	proofBytes = 32
	// ekmBytes is the keying material exported from the TLS 1.3 session.
	ekmBytes = 32
	// ekmLabel is the RFC 8446 exporter label of the cluster proof.
	ekmLabel = "narad-cluster-auth-v1"
	// roleClient and roleServer prefix the exporter output in the proofs,
	// so one side's proof is never valid as the other's.
	roleClient = "client"
	roleServer = "server"
	// alpnProtocol is the ALPN both ends require.
	alpnProtocol = "narad-cluster-quic-v2"
	// statelessResetContext derives the QUIC stateless-reset key from the
	// cluster secret (HMAC-SHA256), so a restarted peer's reset is verifiable.
	statelessResetContext = "narad-cluster-stateless-reset-v1"
	// errorMessageMaxBytes: an error payload is u16 length + message.
	errorMessageMaxBytes = 1<<16 - 1
)

// Frame types (internals.md §10.1). typeCancel is not numbered by the spec;
// this transport numbers it 11: it carries the id of a request whose caller
// gave up, on the pooled stream that carried the request.
const (
	typeError   byte = 3
	typePing    byte = 4
	typePong    byte = 5
	typeRequest byte = 8
	typeReply   byte = 9
	typeAuth    byte = 10
	typeCancel  byte = 11
)

// QUIC stream and connection error codes of this transport.
const (
	codeDone     = 0 // normal end of a stream or connection
	codeAuth     = 1 // the cluster proof was missing or wrong
	codeCancel   = 2 // the caller gave up (deadline or cancellation)
	codeBadFrame = 3 // a frame could not be decoded
	codeShutdown = 4 // the node is closing
	codeAuthConn = 5 // connection closed after the peer failed to prove the secret
	codeSilent   = 6 // connection closed: a liveness ping went unanswered, or the peer fell silent
)

// Lanes (internals.md §10.1): the pooled streams of one connection, per
// kind of traffic, so a burst of one kind never queues behind another.
const (
	laneProduceStreams = 16 // commits and produces
	laneConsumeStreams = 16 // consumes and delivery tokens
	laneAckStreams     = 16 // acks, extends, nacks, AckBatch
	laneControlStreams = 4  // everything else
)

// Liveness (internals.md §10.1): a request that ends on its deadline
// triggers a ping on its stream, at most one per connection at a time and
// one per second; no pong within pongTimeout closes the connection when
// not one byte arrived on it meanwhile.
const (
	pingIntervalMin = 1 * time.Second
	pongTimeout     = 1 * time.Second
)

// Silent-peer watchdog (internals.md §10.1 liveness backstop, extended by
// issue 15; ours, not the original's): a peer cut off the network sends
// nothing, and before this a call to it waited out its deadline (a
// commit's is 30 s, §10.3). While calls are in flight on a connection,
// any QUIC packet from the peer (a reply, a pong, an ACK of our bytes) is
// life; after silentPingAfterDuration of none the connection is pinged
// (under pingIntervalMin), and after silentPeerAfterDuration of none it is
// closed, failing its calls at once. Detection takes between
// silentPeerAfterDuration and that plus silentCheckIntervalDuration after
// the peer's last packet, whatever the calls' deadlines. A connection with
// no call in flight is never judged.
const (
	// silentCheckIntervalDuration: how often each connection's watchdog
	// looks at the packets received.
	silentCheckIntervalDuration = 250 * time.Millisecond
	// silentPingAfterDuration: a connection with calls in flight that
	// received nothing this long is pinged.
	silentPingAfterDuration = 500 * time.Millisecond
	// silentPeerAfterDuration: a connection with calls in flight that
	// received nothing this long (three pings' worth) is closed. It stays
	// at the reroute grace of the produce dispatcher (§3.3, 3 s), so a
	// silent owner's commits fail about when its records may reroute.
	silentPeerAfterDuration = 3 * time.Second
)

// Timing and sizing (internals.md §10.1, §10.3, Appendix A "Node RPC").
const (
	// dialTimeout bounds one QUIC dial (handshake included).
	dialTimeout = 1 * time.Second
	// dialBackoffMin and dialBackoffMax: after a failed dial, requests to
	// that peer fail fast for a backoff that doubles from min to max.
	dialBackoffMin = 250 * time.Millisecond
	dialBackoffMax = 2 * time.Second
	// replyDefaultTimeout bounds a call whose context has no deadline.
	replyDefaultTimeout = 5 * time.Second
	// replyWriteBaseTimeout + replyWritePerChunkTimeout per replyWriteChunkBytes
	// bound the write of one frame.
	replyWriteBaseTimeout     = 5 * time.Second
	replyWritePerChunkTimeout = 1 * time.Second
	replyWriteChunkBytes      = 256 << 10
	// proofReadTimeout bounds how long either end waits for the other's
	// proof on a new stream (our choice: the spec's reply default). A
	// request's payload, once its header arrived, gets the reply-write
	// budget for its size; an idle pooled stream has no read deadline.
	proofReadTimeout = 5 * time.Second
	// handlerSlotsMin and handlerSlotsPerProc: handler concurrency is
	// max(64, 4 × GOMAXPROCS) unless the options say otherwise.
	handlerSlotsMin     = 64
	handlerSlotsPerProc = 4
	// QUIC connection settings.
	quicIdleTimeout          = 30 * time.Second
	quicKeepAlivePeriod      = 10 * time.Second
	quicMaxIncomingStreams   = 1024
	quicStreamWindowBytes    = 256 << 10
	quicStreamWindowMaxBytes = 2 << 20
	quicConnWindowBytes      = 1 << 20
	quicConnWindowMaxBytes   = 8 << 20
	// certLifetime: certificates carry no trust and dialers never check
	// dates; one year keeps old dialers working during upgrades (F37).
	certLifetime = 365 * 24 * time.Hour
	// payloadReadInitialBytes: a payload above this is read into a buffer
	// that starts here and grows fourfold as it fills, so a lying length
	// costs at most what the peer actually sent.
	payloadReadInitialBytes = 64 << 10
)

// Operation payloads (internals.md §3.7, §5.6, §5.9, §10.3). Part of the
// wire format: a decoder refuses counts and lengths above these before it
// allocates anything for them.
const (
	// wireNameMaxBytes caps a topic name, topic id or refusal code field.
	wireNameMaxBytes = 1024
	// wireIdentityMaxBytes caps a forwarded consume's identity (a username
	// is at most 64 characters).
	wireIdentityMaxBytes = 64
	// wireMessageMaxBytes caps a refusal's detail.
	wireMessageMaxBytes = 64 << 10
	// commitRecordsMaxCount caps the records of one commit batch, so a
	// decoded batch's record table stays far below the 16 MiB frame cap
	// (65,536 × 64 bytes = 4 MiB); the dispatcher sends at most 4,096.
	commitRecordsMaxCount = 65536
	// commitRunsMaxCount caps the incarnation runs of one commit batch.
	commitRunsMaxCount = commitRecordsMaxCount
	// consumeDeliveriesMaxCount caps the deliveries of one consume reply
	// (a batch consume takes at most 100).
	consumeDeliveriesMaxCount = 1024
	// ackBatchItemsMaxCount is what an AckBatch decoder accepts (§10.3).
	ackBatchItemsMaxCount = 1024
	// ackBatchSendMaxCount is the most handles one AckBatch carries when
	// this node sends it (§5.9); bigger piles go as several batches.
	ackBatchSendMaxCount = 64
)

// CommitProduceBatches (op 37) payloads (commit_group_codec.go). Part of
// the wire format: a decoder refuses a count above the cap, or above what
// the payload can hold at the minimum sizes, before allocating.
const (
	// commitGroupMaxCount caps the batches of one op-37 request, both what
	// a decoder accepts (request and reply) and what this node puts in one
	// request. An owner runs one request's batches concurrently under a
	// single commit slot (slots.go), so the cap also bounds that
	// concurrency; the dispatcher sends at most as many at a time.
	commitGroupMaxCount = 64
	// commitGroupCountBytes is the batch count opening a request and the
	// item count opening a reply body.
	commitGroupCountBytes = 4
	// commitGroupItemMinBytes is the smallest batch of a request: its
	// length and an op-11 payload of an empty topic (topic length,
	// partition, record count).
	commitGroupItemMinBytes = 4 + 4 + 4 + 4
	// commitGroupReplyItemMinBytes is the smallest item of a reply body:
	// its length and a reply with an empty code, detail and body.
	commitGroupReplyItemMinBytes = 4 + 2 + 4 + 4 + 4
)

// Operation budgets (internals.md §5.9, §5.11, §10.3). Each applies only
// when the caller's context has no earlier deadline.
const (
	// settleTimeout bounds a forwarded ack, extend, nack or AckBatch.
	settleTimeout = 2 * time.Second
	// probeTimeout bounds a local-only consume probe of one owner.
	probeTimeout = 500 * time.Millisecond
	// forwardWaitGrace is added to a forwarded long poll's wait.
	forwardWaitGrace = 2 * time.Second
)

// The ack lane (internals.md §5.9, §5.11, §10.3).
const (
	// ackWindowMin and ackWindowPerProc: per owner, at most
	// max(128, 8 × GOMAXPROCS) ack RPCs in flight; more acks queue.
	ackWindowMin     = 128
	ackWindowPerProc = 8
	// legacyPeerMemory is how long an owner that refused AckBatch, or
	// CommitProduceBatches, as an unknown op (an older release) gets single
	// ops only (AckBatch: 3, 18, 19; CommitProduceBatches: 11).
	legacyPeerMemory = 2 * time.Minute
)

// TopicPartitionStats (op 8) payloads, internals.md §6.6. Part of the wire
// format: a decoder refuses a count above it before allocating.
const (
	// statsPartitionsMaxCount caps the partitions of one stats request and
	// the entries of its reply (a topic has at most 4,096 partitions).
	statsPartitionsMaxCount = 65536
)

// FanoutCursors (op 17) payloads, api.md §2.11, internals.md §6.6. Part of
// the wire format: a decoder refuses a count above these before allocating.
const (
	// fanoutPartitionsMaxCount caps the partitions of one request.
	fanoutPartitionsMaxCount = 65536
	// fanoutChildrenMaxCount caps the children of one request (a parent
	// has at most 108).
	fanoutChildrenMaxCount = 1024
	// fanoutPairsMaxCount caps partitions × children of one request and the
	// entries of its reply: a topic's 4,096 partitions × 108 children fit,
	// and a full reply (17 bytes an entry) stays far below the 16 MiB frame.
	fanoutPairsMaxCount = 1 << 19
)

// Label values of the RPC metrics (api.md §7
// narad_cluster_rpc_requests_total): see rpcOutcome.
const (
	OutcomeOK       = "ok"
	OutcomeRejected = "rejected"
	OutcomeFailed   = "failed"
	OutcomeTimeout  = "timeout"
	OutcomeError    = "error"
	// opLabelUnknown labels a byte no operation has.
	opLabelUnknown = "unknown"
)

// Transfer ops (ListPartitionSegments 22, FetchSegmentChunk 23:
// internals.md §11.3, §11.8, §10.3). Part of the wire format.
const (
	// transferChunkMaxBytes caps one chunk read (the spec's 1 MiB chunk).
	transferChunkMaxBytes = 1 << 20
	// transferSegmentsMaxCount caps the segments of one listing: 64 MiB
	// segments of a partition kept forever; a full listing stays far
	// below the 16 MiB frame.
	transferSegmentsMaxCount = 1 << 16
	// transferSlotsCount is how many transfer ops a node serves at once
	// (each holds its slot until its reply is written).
	transferSlotsCount = 8
)
