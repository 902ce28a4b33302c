package quicpeer

import (
	"context"
	"sync"
)

// lane is a kind of traffic with its own pooled streams on each connection
// (internals.md §10.1).
type lane uint8

const (
	laneProduce lane = iota
	laneConsume
	laneAck
	laneControl
	laneCount
)

// laneSizes is how many streams each lane pools per connection.
var laneSizes = [laneCount]int{
	laneProduce: laneProduceStreams,
	laneConsume: laneConsumeStreams,
	laneAck:     laneAckStreams,
	laneControl: laneControlStreams,
}

// laneOf is the lane op rides: commits and produces on the produce lane,
// consumes and delivery tokens on the consume lane, the ack family on the
// ack lane, everything else on the control lane.
func laneOf(op Op) lane {
	switch op {
	case OpProduce, OpCommitProduce, OpCommitProduceBatch, OpCommitProduceBatches, OpCommitScheduled:
		return laneProduce
	case OpConsume, OpTokenRegister, OpTokenNotify, OpTokenPush:
		return laneConsume
	case OpAck, OpExtendAck, OpNack, OpAckBatch, OpNackDelayed:
		return laneAck
	}
	return laneControl
}

// streamLane is one lane's pool on one connection: a fixed number of slots,
// each empty until first used, taken round-robin.
type streamLane struct {
	mu      sync.Mutex
	streams []*pooledStream
	next    int
}

// stream returns the next stream of lane l, opening one in its slot when
// the slot is empty or its stream broke, and waits until that stream's
// proofs were exchanged. A caller whose ctx ends stops waiting alone: the
// exchange goes on for the stream's next users. A stream that broke after
// its proofs is passed over once for the next slot.
func (c *Client) stream(ctx context.Context, pc *peerConn, peerAddr string, l lane) (*pooledStream, error) {
	for attempt := 0; ; attempt++ {
		ps := pc.lanes[l].take(func() *pooledStream { return c.openStream(pc, peerAddr) }, laneSizes[l])
		select {
		case <-ps.ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if ps.openErr != nil {
			return nil, ps.openErr
		}
		err := ps.failed()
		if err == nil {
			return ps, nil
		}
		if attempt > 0 || pc.conn.Context().Err() != nil {
			return nil, err
		}
	}
}

// take returns the lane's next stream, replacing an empty or broken slot
// with open().
func (sl *streamLane) take(open func() *pooledStream, size int) *pooledStream {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	if sl.streams == nil {
		sl.streams = make([]*pooledStream, size)
	}
	i := sl.next
	sl.next = (sl.next + 1) % len(sl.streams)
	ps := sl.streams[i]
	if ps == nil || ps.failed() != nil {
		ps = open()
		sl.streams[i] = ps
	}
	return ps
}
