package quicpeer

// Op names a node-to-node operation: the first byte of every request
// payload. Op bytes are append-only (internals.md §10.3): part of the wire
// format and must never be renumbered.
type Op byte

// The operations of internals.md §10.3. This package only carries them; the
// operations themselves are registered with Server.Handle by their owners.
const (
	OpProduce             Op = 1
	OpConsume             Op = 2
	OpAck                 Op = 3
	OpCreateTopic         Op = 4
	OpAlterTopic          Op = 5
	OpDeleteTopic         Op = 6
	OpPurgeTopic          Op = 7
	OpTopicPartitionStats Op = 8
	OpRegisterMember      Op = 9
	OpCommitProduce       Op = 10
	OpCommitProduceBatch  Op = 11
	OpCreateUser          Op = 12
	OpUpdateUser          Op = 13
	OpDeleteUser          Op = 14
	OpAttachChild         Op = 15
	OpDetachChild         Op = 16
	OpFanoutCursors       Op = 17
	OpExtendAck           Op = 18
	OpNack                Op = 19
	OpGetTopic            Op = 20
	OpJoinCluster         Op = 21
	OpListPartitionSegs   Op = 22
	OpFetchSegmentChunk   Op = 23
	OpPrepareHandoff      Op = 24
	OpDecommissionMember  Op = 25
	OpCompleteMove        Op = 26
	OpAbortMove           Op = 27
	OpGetAssignment       Op = 28
	OpAppliedIndex        Op = 29
	OpTokenRegister       Op = 30
	OpTokenNotify         Op = 31
	OpAckBatch            Op = 32
	OpNodeStatus          Op = 33
	OpForgetServer        Op = 34
	OpRemoteWrite         Op = 35
	OpRemoteCheck         Op = 36
	// OpCommitProduceBatches carries several CommitProduceBatch (op 11)
	// requests for one owner in one round trip (commit_group_codec.go).
	// Not in the spec's list yet: this node's extension, numbered next.
	OpCommitProduceBatches Op = 37
	// OpConsumerFrontiers reads the consumer ack frontier of partitions on
	// their owner, for a remote child attached `from: unconsumed`
	// (frontiers_codec.go). Not in the spec's list yet: numbered next.
	OpConsumerFrontiers Op = 38
	// OpNackDelayed nacks handles with a delay: the owner keeps each
	// message out of delivery that long (nack_delayed.go). This node's
	// extension, numbered next.
	OpNackDelayed Op = 39
	// OpCommitScheduled commits a batch holding scheduled records (a
	// per-message delay): op 11's request after each record's deliver-at
	// (commit_scheduled.go). An owner without it answers unsupported and
	// the records wait in the sender's ingress log: never delivered early.
	// This node's extension, numbered next.
	OpCommitScheduled Op = 40
	// OpTokenPush spends a delivery token by handing over the record the
	// owner reserved for it (token_push.go): a notification (op 31) that
	// carries its record, so no claim follows. A node without it answers
	// unsupported and is notified instead. This node's extension, numbered
	// next.
	OpTokenPush Op = 41
)
