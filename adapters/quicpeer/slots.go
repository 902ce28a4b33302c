package quicpeer

// Server-side handler bounds (internals.md §10.3, "Server-side
// concurrency"): produce commits run under one bound and the other
// messaging handlers (acks, extends, NACKs, AckBatch, token frames and
// non-blocking consume scans) under another, so a flood of one kind never
// starves the other. A CommitProduceBatches (op 37) takes one commit slot
// for all its batches, as an AckBatch takes one for all its handles.
// Long-poll consumes and the control ops (metadata
// forwards, joins, statistics: most of them call other peers or wait on
// Raft) hold no slot: a handler slot held for a long poll's whole wait
// would let parked consumers stop every commit to this node.

// slotClass says which bound an op's handler runs under.
type slotClass uint8

const (
	slotExempt slotClass = iota
	slotCommit
	slotMessaging
	// slotTransfer bounds the move copy reads (ops 22, 23), which hold
	// their slot until the reply is written.
	slotTransfer
)

// slotClassOf classifies one request by its op and, for a consume, by
// whether it may wait: a probe (local only) or a request without a wait
// is a scan; anything else is a long poll. A consume request that does
// not decode is a scan: its handler refuses it at once.
func slotClassOf(op Op, req []byte) slotClass {
	switch op {
	case OpProduce, OpCommitProduce, OpCommitProduceBatch, OpCommitProduceBatches, OpCommitScheduled:
		return slotCommit
	case OpAck, OpExtendAck, OpNack, OpAckBatch, OpNackDelayed, OpTokenRegister, OpTokenNotify, OpTokenPush:
		return slotMessaging
	case OpListPartitionSegs, OpFetchSegmentChunk, OpPrepareHandoff:
		return slotTransfer
	case OpConsume:
		r, _, err := decodeConsumeRequest(req)
		if err != nil || r.LocalOnly || r.Wait <= 0 {
			return slotMessaging
		}
	}
	return slotExempt
}

// handlerSlots are the server's bounds.
type handlerSlots struct {
	commit, messaging, transfer chan struct{}
}

func newHandlerSlots(n int) handlerSlots {
	return handlerSlots{commit: make(chan struct{}, n), messaging: make(chan struct{}, n),
		transfer: make(chan struct{}, transferSlotsCount)}
}

// of returns the bound of class c, nil for an exempt op.
func (h handlerSlots) of(c slotClass) chan struct{} {
	switch c {
	case slotCommit:
		return h.commit
	case slotMessaging:
		return h.messaging
	case slotTransfer:
		return h.transfer
	}
	return nil
}
