package quicpeer

import (
	"context"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
)

// busyReplyScript: requests are held; "big" is answered with a 4 MiB reply
// trickled over ~2.5 s (the server writes frames one at a time, so a pong
// for this stream waits behind it, as serverStream.write does with wmu);
// "poll" is answered after pollAfter; cancels ignored; pings answered
// under the write lock.
func busyReplyScript(pollAfter time.Duration) func(*quic.Stream, proofs) {
	return func(st *quic.Stream, pr proofs) {
		serveFrames(st, pr, readAnyFrame, true, func(ss *scriptStream, f frame) bool {
			switch {
			case f.Type == typeCancel:
			case string(f.Payload[1:]) == "big":
				ss.wg.Go(func() { trickleReply(ss, f.RequestID) })
			case string(f.Payload[1:]) == "poll":
				ss.replyAfter(pollAfter, f.RequestID, "ok")
			default: // held, answered late
				ss.replyAfter(3*time.Second, f.RequestID, "late")
			}
			return true
		})
	}
}

// trickleReply writes a 4 MiB reply to id in 64 KiB chunks 40 ms apart (a
// slow but live link), holding the stream's write lock throughout.
func trickleReply(ss *scriptStream, id uint64) {
	ss.wmu.Lock()
	defer ss.wmu.Unlock()
	const n = 4 << 20
	_ = ss.st.SetWriteDeadline(time.Time{})
	if _, err := ss.st.Write(appendHeader(nil, typeReply, id, n)); err != nil {
		return
	}
	chunk := make([]byte, 64<<10)
	for sent := 0; sent < n; sent += len(chunk) {
		if _, err := ss.st.Write(chunk); err != nil {
			return
		}
		time.Sleep(40 * time.Millisecond)
	}
}

// ensure that a connection busy moving one large reply is not closed by the
// liveness backstop: the pong queues behind the reply on its stream, but
// every byte that arrives counts as life (internals.md §10.1).
func TestLivenessCountsBytesNotFrames(t *testing.T) {
	rs := startRawServer(t, secretA, busyReplyScript(4*time.Second))
	c, _ := newClient(t, secretA)
	type out struct {
		what string
		err  error
	}
	outs := make(chan out, 8)
	call := func(what, payload string, d time.Duration) {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		_, err := c.Call(ctx, rs.addr, OpGetTopic, []byte(payload))
		outs <- out{what, err}
	}
	// slot 0: the big reply; slots 1..3: long polls answered after 4 s.
	go call("big", "big", 10*time.Second)
	time.Sleep(100 * time.Millisecond)
	for range 3 {
		go call("poll", "poll", 12*time.Second)
		time.Sleep(100 * time.Millisecond)
	}
	// slot 0 again: a short call that times out behind the big reply.
	go call("probe", "probe", 300*time.Millisecond)
	for range 5 {
		o := <-outs
		t.Logf("%s: %v", o.what, o.err)
		if o.what != "probe" && o.err != nil {
			t.Errorf("%s failed on a live connection: %v", o.what, o.err)
		}
	}
}

// stallScript: on a stream, a request frame above 1 MiB stops the reader
// for stall (flow control then blocks the client's write); "poll" is
// answered after pollAfter; "hold" after 15 s.
func stallScript(stall, pollAfter time.Duration) func(*quic.Stream, proofs) {
	read := func(st *quic.Stream) (frame, error) {
		var h [frameHeaderBytes]byte
		if _, err := readFull(st, h[:]); err != nil {
			return frame{}, err
		}
		f, n, err := parseHeader(h[:], framePayloadMaxBytes)
		if err != nil {
			return frame{}, err
		}
		if n > 1<<20 {
			time.Sleep(stall)
		}
		f.Payload, err = readPayload(st, n)
		return f, err
	}
	return func(st *quic.Stream, pr proofs) {
		serveFrames(st, pr, read, true, func(ss *scriptStream, f frame) bool {
			switch {
			case f.Type == typeCancel:
			case string(f.Payload[1:]) == "poll":
				ss.replyAfter(pollAfter, f.RequestID, "ok")
			case string(f.Payload[1:]) == "hold":
				ss.replyAfter(15*time.Second, f.RequestID, "ok")
			default:
				ss.replyAfter(0, f.RequestID, "ok")
			}
			return true
		})
	}
}

func readFull(st *quic.Stream, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := st.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// ensure that a cancel frame that cannot be written in time (a big write
// holds the stream's write lock) leaves the stream open, and that no pong
// is awaited for a ping that was never written, so a long poll on another
// stream of the connection is answered (internals.md §10.1).
func TestUnsentCancelKeepsStreamAndConnection(t *testing.T) {
	rs := startRawServer(t, secretA, stallScript(9*time.Second, 11*time.Second))
	c, _ := newClient(t, secretA)
	type out struct {
		what string
		err  error
	}
	outs := make(chan out, 8)
	call := func(what string, payload []byte, d time.Duration) {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		_, err := c.Call(ctx, rs.addr, OpGetTopic, payload)
		outs <- out{what, err}
	}
	go call("A (times out)", []byte("hold"), time.Second) // slot 0
	time.Sleep(100 * time.Millisecond)
	go call("C long poll", []byte("poll"), 14*time.Second) // slot 1
	time.Sleep(100 * time.Millisecond)
	go call("C2 long poll", []byte("poll"), 14*time.Second) // slot 2
	time.Sleep(100 * time.Millisecond)
	go call("C3 long poll", []byte("poll"), 14*time.Second) // slot 3
	time.Sleep(100 * time.Millisecond)
	go call("B big write", make([]byte, 2<<20), 30*time.Second) // slot 0
	for range 5 {
		o := <-outs
		t.Logf("%s: %v", o.what, o.err)
		if o.what != "A (times out)" && o.err != nil {
			t.Errorf("%s failed: %v", o.what, o.err)
		}
	}
}

// legacyScript answers a cancel frame with an error frame of the same id,
// as internals §10.1 says servers predating the cancel frame do, and every
// request after 1 s ("slow") or 3 s ("long").
func legacyScript(st *quic.Stream, pr proofs) {
	serveFrames(st, pr, readAnyFrame, true, func(ss *scriptStream, f frame) bool {
		switch {
		case f.Type == typeCancel:
			ss.write(frame{Type: typeError, RequestID: f.RequestID, Payload: errorPayload("unknown frame type 11")})
		case string(f.Payload[1:]) == "long":
			ss.replyAfter(3*time.Second, f.RequestID, "ok")
		default:
			ss.replyAfter(time.Second, f.RequestID, "ok")
		}
		return true
	})
}

// ensure that the error frame an older server answers a cancel frame with,
// followed by its answer to the request, breaks nothing: another call on
// the same stream is answered (internals.md §10.1).
func TestOlderServersCancelAnswerIsDropped(t *testing.T) {
	rs := startRawServer(t, secretA, legacyScript)
	c, _ := newClient(t, secretA)
	done := make(chan error, 1)
	go func() {
		_, err := c.Call(context.Background(), rs.addr, OpAck, []byte("long")) // 5 s default
		done <- err
	}()
	time.Sleep(100 * time.Millisecond)
	// 15 more ack calls: the next one on the same stream is the 17th.
	for range laneAckStreams - 1 {
		go func() { _, _ = c.Call(context.Background(), rs.addr, OpAck, []byte("x")) }()
	}
	time.Sleep(200 * time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(200 * time.Millisecond); cancel() }()
	_, err := c.Call(ctx, rs.addr, OpAck, []byte("slow")) // same stream as "long"
	t.Logf("cancelled call: %v", err)
	if err := <-done; err != nil {
		t.Fatalf("unrelated call on the stream failed: %v", err)
	}
}
