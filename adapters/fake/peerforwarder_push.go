package fake

import (
	"context"
	"time"

	"github.com/narad/narad/domain"
)

// PushToken records the push and answers taken unless node passes
// notifications (PassNotifications), RefusePushes armed an error or
// FailNext one for the next call; a taken push asks for the token again
// for what AskAgain set.
func (f *PeerForwarder) PushToken(ctx context.Context, node, from, topic string, ds []domain.Delivery) (bool, time.Duration, error) {
	if err := ctx.Err(); err != nil {
		return false, 0, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pushes = append(f.pushes, TokenCall{Node: node, From: from, Topic: topic, Pushed: append([]domain.Delivery(nil), ds...)})
	if f.pushErr != nil {
		return false, 0, f.pushErr
	}
	if err := f.failNext; err != nil {
		f.failNext = nil
		return false, 0, err
	}
	if f.passes[node] {
		return false, 0, nil
	}
	return true, f.again, nil
}

// AskAgain makes every later taken push ask for its token again for ttl
// (0: not, the default).
func (f *PeerForwarder) AskAgain(ttl time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.again = ttl
}

// RefusePushes makes every later PushToken fail with err (nil: take them
// again); domain.ErrNotImplemented plays a node that predates pushes.
func (f *PeerForwarder) RefusePushes(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pushErr = err
}

// Pushes returns the pushes seen, refused ones included, in order.
func (f *PeerForwarder) Pushes() []TokenCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]TokenCall(nil), f.pushes...)
}
