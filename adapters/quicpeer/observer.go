package quicpeer

import (
	"context"
	"errors"
	"time"
)

// Observer sees every node RPC this node sends through Peers, once per
// call, on the caller (internals.md §10.3; api.md §7
// narad_cluster_rpc_requests_total{op,outcome} and
// narad_cluster_rpc_request_seconds{op}). It must be safe for concurrent
// use and return quickly: it runs on the caller's path.
type Observer interface {
	// RPCDone reports one finished call: op is OpLabel's name, outcome
	// one of OutcomeOK, OutcomeRejected, OutcomeFailed, OutcomeTimeout,
	// OutcomeError, took the round trip (address lookup included).
	RPCDone(op, outcome string, took time.Duration)
}

// PeersOption configures Peers beyond its required dependencies.
type PeersOption func(*Peers)

// WithObserver makes Peers report every call to o; a nil o observes
// nothing.
func WithObserver(o Observer) PeersOption {
	return func(p *Peers) {
		if o != nil {
			p.obs = o
		}
	}
}

// noObserver is the Observer of Peers built without one.
type noObserver struct{}

func (noObserver) RPCDone(string, string, time.Duration) {}

// opLabels are the op label values of the RPC metrics: snake_case names of
// internals.md §10.3's operations (ack_batch apart from ack,
// commit_produce_batches apart from commit_produce_batch). Changing one
// breaks dashboards.
var opLabels = map[Op]string{
	OpProduce: "produce", OpConsume: "consume", OpAck: "ack", OpCreateTopic: "create_topic",
	OpAlterTopic: "alter_topic", OpDeleteTopic: "delete_topic", OpPurgeTopic: "purge_topic",
	OpTopicPartitionStats: "topic_partition_stats", OpRegisterMember: "register_member",
	OpCommitProduce: "commit_produce", OpCommitProduceBatch: "commit_produce_batch",
	OpCreateUser: "create_user", OpUpdateUser: "update_user", OpDeleteUser: "delete_user",
	OpAttachChild: "attach_child", OpDetachChild: "detach_child", OpFanoutCursors: "fanout_cursors",
	OpExtendAck: "extend_ack", OpNack: "nack", OpGetTopic: "get_topic", OpJoinCluster: "join_cluster",
	OpListPartitionSegs: "list_partition_segments", OpFetchSegmentChunk: "fetch_segment_chunk",
	OpPrepareHandoff: "prepare_handoff", OpDecommissionMember: "decommission_member",
	OpCompleteMove: "complete_move", OpAbortMove: "abort_move", OpGetAssignment: "get_assignment",
	OpAppliedIndex: "applied_index", OpTokenRegister: "token_register", OpTokenNotify: "token_notify",
	OpAckBatch: "ack_batch", OpNodeStatus: "node_status", OpForgetServer: "forget_server",
	OpRemoteWrite: "remote_write", OpRemoteCheck: "remote_check",
	OpCommitProduceBatches: "commit_produce_batches", OpConsumerFrontiers: "consumer_frontiers",
	OpNackDelayed: "nack_delayed", OpCommitScheduled: "commit_scheduled", OpTokenPush: "token_push",
}

// OpLabel is op's label value in the RPC metrics ("unknown" for a byte no
// operation has).
func OpLabel(op Op) string {
	if l, ok := opLabels[op]; ok {
		return l
	}
	return opLabelUnknown
}

// rpcOutcome classifies one call for the metrics. A reply sets the outcome
// by its status: below 400 ok, 4xx rejected (the peer refused: not owner,
// topic absent, lease gone, an op it does not know), 5xx failed (the peer
// answered but could not act: unavailable, poisoned log, internal error).
// Without a reply: timeout when the call's deadline passed, error for
// everything else (no address, unreachable, authentication, a malformed or
// undecodable reply, the caller's cancellation), except an error frame:
// the peer's refusal of an op it does not know is rejected, any other error
// frame (its handler failed) is failed.
func rpcOutcome(status uint16, err error) string {
	switch {
	case status >= 500:
		return OutcomeFailed
	case status >= 400:
		return OutcomeRejected
	case status > 0 || err == nil:
		return OutcomeOK
	case errors.Is(err, ErrTimeout) || errors.Is(err, context.DeadlineExceeded):
		return OutcomeTimeout
	case errors.Is(err, ErrUnsupportedOp):
		return OutcomeRejected
	case errors.Is(err, ErrRemote):
		return OutcomeFailed // the peer's handler failed, or it refused our frame
	}
	return OutcomeError
}
