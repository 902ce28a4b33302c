package quicpeer

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// The three classes of a forward's failure (ports.PeerForwarder): not sent
// (the owner surely did not act), sent without an answer (the outcome is
// unknown), and the owner's refusal. api.md §2.15 answers the first 503
// and the second 502.

// wantClass fails unless err is of exactly the given transport class.
func wantClass(t *testing.T, what string, err, class error) {
	t.Helper()
	other := domain.ErrNoAnswer
	if class == domain.ErrNoAnswer {
		other = domain.ErrNotSent
	}
	if !errors.Is(err, class) || errors.Is(err, other) {
		t.Fatalf("%s: %v, want class %q only", what, err, class)
	}
}

var oneHandle = []domain.ReceiptHandle{{Partition: 1, Offset: 2, Nonce: 3}}

// ensure that a node without an address and a caller that gave up before
// anything was sent fail as "not sent".
func TestForwardNotSentBeforeTheWire(t *testing.T) {
	t.Parallel()
	o := startOwner(t)
	p := callerFor(t, o)
	_, err := p.SettleRemote(context.Background(), "stranger", "t", oneHandle, ports.SettleAck)
	wantClass(t, "unknown node", err, domain.ErrNotSent)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = p.SettleRemote(ctx, "owner", "t", oneHandle, ports.SettleAck)
	wantClass(t, "cancelled caller", err, domain.ErrNotSent)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled caller: %v, want context.Canceled kept", err)
	}
	if _, settles, _ := o.service.calls(); len(settles) != 0 {
		t.Fatalf("the owner applied %+v", settles)
	}
}

// ensure that an owner that refuses our cluster proof, which it checks
// before reading any request, leaves the call "not sent".
func TestForwardNotSentWhenProofRefused(t *testing.T) {
	t.Parallel()
	o := startOwner(t)
	c, _ := newClient(t, secretB)
	p := NewPeers(c, staticResolver{"owner": o.srv.Addr().String()})
	_, err := p.SettleRemote(context.Background(), "owner", "t", oneHandle, ports.SettleNack)
	wantClass(t, "refused proof", err, domain.ErrNotSent)
	if !errors.Is(err, ErrAuth) {
		t.Fatalf("refused proof: %v, want ErrAuth", err)
	}
}

// ensure that an owner that stops answering once it has the request (its
// handler runs and never returns) leaves the call "sent, no answer" at the
// caller's deadline, on a fresh and on a proven connection.
func TestForwardNoAnswerWhenOwnerStopsAnswering(t *testing.T) {
	t.Parallel()
	o := startOwner(t)
	entered := make(chan struct{}, 2)
	o.srv.Handle(OpAck, func(ctx context.Context, _ []byte) ([]byte, error) {
		entered <- struct{}{}
		<-ctx.Done()
		return nil, ctx.Err()
	})
	p := callerFor(t, o)
	for _, conn := range []string{"fresh", "proven"} {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		_, err := p.SettleRemote(ctx, "owner", "t", oneHandle, ports.SettleAck)
		cancel()
		wantClass(t, conn+" connection", err, domain.ErrNoAnswer)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("%s connection: %v, want the deadline kept", conn, err)
		}
		select {
		case <-entered:
		default:
			t.Fatalf("%s connection: the owner's handler never ran", conn)
		}
	}
}

// ensure that an owner that goes down while it runs the request leaves the
// call "sent, no answer", and that once the broken connection is noticed,
// calls are "not sent" (a call racing the close may still go out on it).
func TestForwardNoAnswerWhenOwnerDiesMidCall(t *testing.T) {
	t.Parallel()
	o := startOwner(t)
	entered := make(chan struct{})
	o.srv.Handle(OpExtendAck, func(ctx context.Context, _ []byte) ([]byte, error) {
		close(entered)
		<-ctx.Done()
		return nil, ctx.Err()
	})
	p := callerFor(t, o)
	errc := make(chan error, 1)
	go func() {
		_, err := p.SettleRemote(context.Background(), "owner", "t", oneHandle, ports.SettleExtend)
		errc <- err
	}()
	<-entered
	if err := o.srv.Close(); err != nil {
		t.Fatal(err)
	}
	wantClass(t, "owner died mid-call", <-errc, domain.ErrNoAnswer)
	waitFor(t, "a call not sent to the closed owner", func() bool {
		_, err := p.SettleRemote(context.Background(), "owner", "t", oneHandle, ports.SettleExtend)
		if !errors.Is(err, domain.ErrNotSent) && !errors.Is(err, domain.ErrNoAnswer) {
			t.Fatalf("owner down: %v", err)
		}
		return errors.Is(err, domain.ErrNotSent)
	})
}

// ensure that a reply this node cannot read, and a refusal code it does not
// know, are "sent, no answer" (the owner acted in some way), while a known
// refusal is the owner's domain error with no transport class.
func TestForwardUnreadableAnswersAreNoAnswer(t *testing.T) {
	t.Parallel()
	rs := startRawServer(t, secretA, func(st *quic.Stream, pr proofs) {
		if !serverHandshake(st, pr) {
			return
		}
		f, err := readFrame(st, framePayloadMaxBytes)
		if err != nil {
			return
		}
		_ = writeFrame(st, frame{Type: typeReply, RequestID: f.RequestID, Payload: []byte{0, 1}})
		_ = st.Close()
	})
	c, _ := newClient(t, secretA)
	p := NewPeers(c, staticResolver{"raw": rs.addr})
	_, err := p.ConsumeRemote(context.Background(), "raw", ports.RemoteConsume{Topic: "t", LocalOnly: true})
	wantClass(t, "truncated reply", err, domain.ErrNoAnswer)

	err = reply{status: 418, code: "teapot"}.err("raw", OpAck)
	wantClass(t, "unknown refusal code", err, domain.ErrNoAnswer)
	err = reply{status: 410, code: "lease_gone"}.err("raw", OpAck)
	if !errors.Is(err, domain.ErrLeaseGone) || isTransport(err) {
		t.Fatalf("known refusal: %v", err)
	}
}

// ensure that a success body this node cannot read is "sent, no answer" on
// the operations beyond the forwards too (package doc: every call failure
// carries its class): partition stats (op 8, internals.md §6.6), fan-out
// cursors (op 17) and a join (op 21, §9.3), whose admission is JSON.
func TestUnreadableSuccessBodiesAreNoAnswer(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t, ServerOptions{})
	for _, op := range []Op{OpTopicPartitionStats, OpFanoutCursors, OpJoinCluster} {
		srv.Handle(op, func(context.Context, []byte) ([]byte, error) { return okReply([]byte{1}), nil })
	}
	c, _ := newClient(t, secretA)
	p := NewPeers(c, staticResolver{"owner": srv.Addr().String()})
	ctx := context.Background()
	_, statsErr := p.PartitionStats(ctx, "owner", "t", "", []int32{0})
	_, lagErr := p.FanoutLag(ctx, "owner", "t", "", []int32{0}, []ports.ChildEpoch{{Child: "c"}})
	_, joinErr := NewJoinClient(c).Join(ctx, srv.Addr().String(), sampleJoin())
	for what, err := range map[string]error{"stats": statsErr, "fanout cursors": lagErr, "join": joinErr} {
		wantClass(t, what, err, domain.ErrNoAnswer)
		if !errors.Is(err, ErrBadPayload) {
			t.Fatalf("%s: %v, want ErrBadPayload kept", what, err)
		}
	}
}
