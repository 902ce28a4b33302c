package fake

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

var (
	_ ports.PeerForwarder = (*PeerForwarder)(nil)
	_ ports.TokenPeers    = (*PeerForwarder)(nil)
)

// TokenCall is one RegisterTokens or NotifyToken a PeerForwarder saw: Node
// is the node called (the owner of a registration, the requester of a
// notification), From the caller.
type TokenCall struct {
	Node, From string
	Regs       []ports.TokenRegistration // registrations only
	Topic      string                    // notifications and pushes only
	Probe      bool                      // a registration a probe carried (ProbeLeavingToken)
	Pushed     []domain.Delivery         // pushes only (PushToken)
}

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
	Delay       time.Duration // a nack's through NackRemote; 0 otherwise
	Reason      string        // a nack's through NackRemote; "" otherwise
}

// PeerForwarder is an in-memory ports.PeerForwarder. Each node answers
// consumes with the deliveries queued for it by Offer (one Offer per call,
// none when nothing is queued), and settles with nil per handle unless
// RefuseHandle armed an error for it. FailNext makes the next call of
// either kind fail whole with an error of any class: ErrFakePeerNotSent
// (never left), ErrFakePeerFailure (the default: sent, no answer), or an
// owner's domain error. Calls are recorded whatever their outcome. As a
// ports.TokenPeers it records registrations (RefuseTokens fails them) and
// notifications and pushes, answered claimed (taken) unless
// PassNotifications says otherwise; RefusePushes plays a node that
// predates pushes; OnRegister plays the owner's side. Safe for concurrent
// use.
type PeerForwarder struct {
	mu       sync.Mutex
	offers   map[string][][]domain.Delivery
	refused  map[domain.ReceiptHandle]error
	failNext error
	consumes []ForwardedConsume
	settles  []ForwardedSettle

	registrations []TokenCall
	notifications []TokenCall
	pushes        []TokenCall
	pushErr       error           // answers every PushToken when set
	again         time.Duration   // a taken push asks its token again this long
	tokenErr      error           // answers every RegisterTokens when set
	passes        map[string]bool // nodes that pass notifications
	registered    func(TokenCall)
}

// NewPeerForwarder returns a PeerForwarder with nothing queued.
func NewPeerForwarder() *PeerForwarder {
	return &PeerForwarder{offers: map[string][][]domain.Delivery{}, refused: map[domain.ReceiptHandle]error{}, passes: map[string]bool{}}
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
	return f.consumeLocked(node, req)
}

func (f *PeerForwarder) consumeLocked(node string, req ports.RemoteConsume) ([]domain.Delivery, error) {
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
	if op > ports.SettleNack {
		return nil, fmt.Errorf("fake forwarder: settle mode %d: %w", op, domain.ErrInvalidArgument)
	}
	return f.settle(ctx, ForwardedSettle{Node: node, Topic: topic, Handles: hs, Op: op})
}

// NackRemote records a nack with its delay and reason (Op SettleNack) and
// answers as SettleRemote.
func (f *PeerForwarder) NackRemote(ctx context.Context, node, topic string, hs []domain.ReceiptHandle, opts ports.NackOptions) ([]error, error) {
	return f.settle(ctx, ForwardedSettle{Node: node, Topic: topic, Handles: hs, Op: ports.SettleNack, Delay: opts.Delay, Reason: opts.Reason})
}

func (f *PeerForwarder) settle(ctx context.Context, fs ForwardedSettle) ([]error, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	fs.Handles = append([]domain.ReceiptHandle(nil), fs.Handles...)
	f.settles = append(f.settles, fs)
	if err := f.takeFailure(); err != nil {
		return nil, err
	}
	out := make([]error, len(fs.Handles))
	for i, h := range fs.Handles {
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

// RefuseTokens makes every later RegisterTokens fail with err (nil: accept
// them again); domain.ErrNotImplemented plays an owner that predates them.
func (f *PeerForwarder) RefuseTokens(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tokenErr = err
}

// PassNotifications makes node answer every later notification with a pass
// (pass=false: claimed again, the default).
func (f *PeerForwarder) PassNotifications(node string, pass bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.passes[node] = pass
}

// OnRegister calls fn after every later registration the fake accepts
// (nil: none), e.g. to play an owner that notifies at once. fn runs
// without the fake's lock, before RegisterTokens returns.
func (f *PeerForwarder) OnRegister(fn func(TokenCall)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.registered = fn
}

// RegisterTokens records the registration.
func (f *PeerForwarder) RegisterTokens(ctx context.Context, owner, from string, regs []ports.TokenRegistration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	call := TokenCall{Node: owner, From: from, Regs: append([]ports.TokenRegistration(nil), regs...)}
	f.mu.Lock()
	f.registrations = append(f.registrations, call)
	err, fn := f.tokenErr, f.registered
	f.mu.Unlock()
	if err == nil && fn != nil {
		fn(call)
	}
	return err
}

// ProbeLeavingToken answers as ConsumeRemote of the probe; an empty answer
// leaves the token (recorded among the registrations, Probe set, and
// passed to the OnRegister hook) unless RefuseTokens armed an error, which
// plays an owner that cannot read the token: left false, no error.
func (f *PeerForwarder) ProbeLeavingToken(ctx context.Context, owner, from string, req ports.RemoteConsume, ttl time.Duration) ([]domain.Delivery, bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	req.LocalOnly, req.Wait = true, 0
	f.mu.Lock()
	ds, err := f.consumeLocked(owner, req)
	left := err == nil && len(ds) == 0 && ttl > 0 && f.tokenErr == nil
	call := TokenCall{Node: owner, From: from, Regs: []ports.TokenRegistration{{Topic: req.Topic, TTL: ttl}}, Probe: true}
	if left {
		f.registrations = append(f.registrations, call)
	}
	fn := f.registered
	f.mu.Unlock()
	if left && fn != nil {
		fn(call)
	}
	return ds, left, err
}

// NotifyToken records the notification and answers claimed unless node
// passes.
func (f *PeerForwarder) NotifyToken(ctx context.Context, node, from, topic string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	call := TokenCall{Node: node, From: from, Topic: topic}
	f.mu.Lock()
	f.notifications = append(f.notifications, call)
	pass := f.passes[node]
	f.mu.Unlock()
	return !pass, nil
}

// Registrations returns the registrations seen, in order.
func (f *PeerForwarder) Registrations() []TokenCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]TokenCall(nil), f.registrations...)
}

// Notifications returns the notifications seen, in order.
func (f *PeerForwarder) Notifications() []TokenCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]TokenCall(nil), f.notifications...)
}
