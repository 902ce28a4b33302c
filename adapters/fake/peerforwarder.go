package fake

import (
	"context"
	"fmt"
	"sync"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

var _ ports.PeerForwarder = (*PeerForwarder)(nil)

// ForwardedConsume is one ConsumeRemote a PeerForwarder saw.
type ForwardedConsume struct {
	Node string
	Req  ports.RemoteConsume
}

// ForwardedSettle is one SettleRemote a PeerForwarder saw.
type ForwardedSettle struct {
	Node, Topic string
	Handles     []domain.ReceiptHandle
	Op          ports.SettleOp
}

// PeerForwarder is an in-memory ports.PeerForwarder. Each node answers
// consumes with the deliveries queued for it by Offer (one Offer per call,
// none when nothing is queued), and settles with nil per handle unless
// RefuseHandle armed an error for it. FailNext makes the next call of
// either kind fail whole with an error of any class: ErrFakePeerNotSent
// (never left), ErrFakePeerFailure (the default: sent, no answer), or an
// owner's domain error. Calls are recorded whatever their outcome. Safe for
// concurrent use.
type PeerForwarder struct {
	mu       sync.Mutex
	offers   map[string][][]domain.Delivery
	refused  map[domain.ReceiptHandle]error
	failNext error
	consumes []ForwardedConsume
	settles  []ForwardedSettle
}

// NewPeerForwarder returns a PeerForwarder with nothing queued.
func NewPeerForwarder() *PeerForwarder {
	return &PeerForwarder{offers: map[string][][]domain.Delivery{}, refused: map[domain.ReceiptHandle]error{}}
}

// Offer queues ds as node's answer to one later ConsumeRemote.
func (f *PeerForwarder) Offer(node string, ds ...domain.Delivery) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.offers[node] = append(f.offers[node], ds)
}

// RefuseHandle makes every later settle of h answer err.
func (f *PeerForwarder) RefuseHandle(h domain.ReceiptHandle, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.refused[h] = err
}

// FailNext makes the next call fail whole with err (ErrFakePeerFailure
// when nil). A consume failing this way takes no offer.
func (f *PeerForwarder) FailNext(err error) {
	if err == nil {
		err = ErrFakePeerFailure
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failNext = err
}

// ConsumeRemote answers node's next queued offer.
func (f *PeerForwarder) ConsumeRemote(ctx context.Context, node string, req ports.RemoteConsume) ([]domain.Delivery, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.consumes = append(f.consumes, ForwardedConsume{Node: node, Req: req})
	if err := f.takeFailure(); err != nil {
		return nil, err
	}
	q := f.offers[node]
	if len(q) == 0 {
		return nil, nil
	}
	f.offers[node] = q[1:]
	return append([]domain.Delivery(nil), q[0]...), nil
}

// SettleRemote answers each handle nil or its armed refusal.
func (f *PeerForwarder) SettleRemote(ctx context.Context, node, topic string, hs []domain.ReceiptHandle, op ports.SettleOp) ([]error, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if op > ports.SettleNack {
		return nil, fmt.Errorf("fake forwarder: settle mode %d: %w", op, domain.ErrInvalidArgument)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.settles = append(f.settles, ForwardedSettle{Node: node, Topic: topic, Handles: append([]domain.ReceiptHandle(nil), hs...), Op: op})
	if err := f.takeFailure(); err != nil {
		return nil, err
	}
	out := make([]error, len(hs))
	for i, h := range hs {
		out[i] = f.refused[h]
	}
	return out, nil
}

func (f *PeerForwarder) takeFailure() error {
	err := f.failNext
	f.failNext = nil
	return err
}

// Consumes returns the consumes seen, in order.
func (f *PeerForwarder) Consumes() []ForwardedConsume {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]ForwardedConsume(nil), f.consumes...)
}

// Settles returns the settles seen, in order.
func (f *PeerForwarder) Settles() []ForwardedSettle {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]ForwardedSettle(nil), f.settles...)
}
