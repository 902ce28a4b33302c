package metastore

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/lni/dragonboat/v4/config"
	"github.com/lni/dragonboat/v4/raftio"
	pb "github.com/lni/dragonboat/v4/raftpb"
	"go.uber.org/zap"
)

// The Raft transport under mutual TLS. Dragonboat's TCP transport, given
// NodeHostConfig.MutualTLS, checks a peer against the host it dialed (an IP
// here) and re-reads the files at every dial; Narad nodes all present the
// one cluster name, and the files are read once. This transport keeps
// dragonboat's contract (raftio.ITransport) with its own wire format:
//
//	server → client, once after the handshake: "NRT1" (the accept preface)
//	then client → server frames: u8 kind | u32 length (big-endian) | payload
//
// where the payload is a marshalled MessageBatch (kind 1) or snapshot Chunk
// (kind 2). TLS 1.3 finishes the client's handshake before the server has
// judged the client's certificate; waiting for the preface makes a refused
// certificate fail the dial with the server's alert instead of later writes
// failing silently.
const (
	raftTLSTransportName = "narad-mtls-tcp"
	raftTLSPreface       = "NRT1"
	frameHeaderBytes     = 5
	frameBatch           = 1
	frameChunk           = 2
)

// tlsTransportFactory is the NodeHostConfig.Expert.TransportFactory used
// under mutual TLS.
type tlsTransportFactory struct {
	server, client *tls.Config
	log            *zap.Logger
}

var _ config.TransportFactory = (*tlsTransportFactory)(nil)

func (f *tlsTransportFactory) Create(nhc config.NodeHostConfig, onBatch raftio.MessageHandler,
	onChunk raftio.ChunkHandler) raftio.ITransport {
	return &tlsTransport{
		listenAddr: nhc.GetListenAddress(), server: f.server, client: f.client,
		onBatch: onBatch, onChunk: onChunk, logs: newHandshakeLogs(f.log),
		conns: map[net.Conn]struct{}{}, done: make(chan struct{}),
	}
}

// Validate accepts the host:port addresses dragonboat's TCP transport does.
func (f *tlsTransportFactory) Validate(addr string) bool { return config.IsValidAddress(addr) }

type tlsTransport struct {
	listenAddr     string
	server, client *tls.Config
	onBatch        raftio.MessageHandler
	onChunk        raftio.ChunkHandler
	logs           *handshakeLogs

	mu     sync.Mutex
	ln     net.Listener
	conns  map[net.Conn]struct{} // accepted, not yet finished
	closed bool
	done   chan struct{}
	wg     sync.WaitGroup
}

var _ raftio.ITransport = (*tlsTransport)(nil)

func (t *tlsTransport) Name() string { return raftTLSTransportName }

func (t *tlsTransport) Start() error {
	ln, err := net.Listen("tcp", t.listenAddr)
	if err != nil {
		return fmt.Errorf("metastore: raft transport listen on %s: %w", t.listenAddr, err)
	}
	t.mu.Lock()
	t.ln = ln
	t.mu.Unlock()
	t.wg.Add(1)
	go t.accept(ln)
	return nil
}

// Close stops accepting, closes every accepted connection and waits for
// their goroutines. Outgoing connections belong to dragonboat, which closes
// them first.
func (t *tlsTransport) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	close(t.done)
	if t.ln != nil {
		_ = t.ln.Close()
	}
	for c := range t.conns {
		_ = c.Close()
	}
	t.mu.Unlock()
	t.wg.Wait()
	return nil
}

func (t *tlsTransport) accept(ln net.Listener) {
	defer t.wg.Done()
	for {
		conn, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			t.logs.log.Warn("raft transport: accept failed", zap.Error(err))
			select {
			case <-t.done:
				return
			case <-time.After(raftAcceptRetryPause):
			}
			continue
		}
		t.mu.Lock()
		if t.closed {
			t.mu.Unlock()
			_ = conn.Close()
			return
		}
		t.conns[conn] = struct{}{}
		t.wg.Add(1)
		t.mu.Unlock()
		go t.serve(conn)
	}
}

// serve completes the handshake, sends the preface and hands every frame
// to dragonboat until the connection ends.
func (t *tlsTransport) serve(raw net.Conn) {
	defer t.wg.Done()
	defer func() {
		t.mu.Lock()
		delete(t.conns, raw)
		t.mu.Unlock()
		_ = raw.Close()
	}()
	conn := tls.Server(raw, t.server)
	ctx, cancel := context.WithTimeout(context.Background(), raftTLSHandshakeTimeout)
	err := conn.HandshakeContext(ctx)
	cancel()
	if err == nil {
		err = writeWithin(conn, []byte(raftTLSPreface), raftTLSHandshakeTimeout)
	}
	if err != nil {
		t.logs.failed("accept", raw.RemoteAddr().String(), err)
		return
	}
	var hdr [frameHeaderBytes]byte
	buf := make([]byte, 0, raftFrameBufferBytes)
	for {
		_ = conn.SetReadDeadline(time.Time{}) // an idle connection is fine
		if _, err := io.ReadFull(conn, hdr[:]); err != nil {
			return
		}
		size := binary.BigEndian.Uint32(hdr[1:])
		if size == 0 || size > raftFrameMaxBytes {
			t.logs.log.Warn("raft transport: bad frame length", zap.Uint32("bytes", size))
			return
		}
		body := buf[:0]
		if int(size) > cap(buf) {
			body = make([]byte, size) // one-off: keep the kept buffer small
		}
		body = body[:size]
		_ = conn.SetReadDeadline(time.Now().Add(frameIOTimeout(int(size))))
		if _, err := io.ReadFull(conn, body); err != nil {
			return
		}
		if !t.deliver(hdr[0], body) {
			return
		}
	}
}

// deliver decodes one frame and hands it to dragonboat; false ends the
// connection.
func (t *tlsTransport) deliver(kind byte, body []byte) bool {
	switch kind {
	case frameBatch:
		var b pb.MessageBatch
		if err := b.Unmarshal(body); err != nil {
			t.logs.log.Warn("raft transport: bad message batch", zap.Error(err))
			return false
		}
		t.onBatch(b)
		return true
	case frameChunk:
		var c pb.Chunk
		if err := c.Unmarshal(body); err != nil {
			t.logs.log.Warn("raft transport: bad snapshot chunk", zap.Error(err))
			return false
		}
		if !t.onChunk(c) {
			t.logs.log.Warn("raft transport: snapshot chunk refused", zap.Uint64("shard", c.ShardID),
				zap.Uint64("from", c.From), zap.Uint64("chunk", c.ChunkId))
			return false
		}
		return true
	default:
		t.logs.log.Warn("raft transport: unknown frame kind", zap.Uint8("kind", kind))
		return false
	}
}

func (t *tlsTransport) GetConnection(ctx context.Context, target string) (raftio.IConnection, error) {
	conn, err := t.dial(ctx, target)
	if err != nil {
		return nil, err
	}
	return &tlsConnection{conn: conn}, nil
}

func (t *tlsTransport) GetSnapshotConnection(ctx context.Context, target string) (raftio.ISnapshotConnection, error) {
	conn, err := t.dial(ctx, target)
	if err != nil {
		return nil, err
	}
	return &tlsConnection{conn: conn}, nil
}

// dial connects to target, checks its certificate and waits for its
// preface, all within raftTLSHandshakeTimeout.
func (t *tlsTransport) dial(ctx context.Context, target string) (*tls.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, raftTLSHandshakeTimeout)
	defer cancel()
	d := net.Dialer{KeepAlive: raftKeepAlivePeriod}
	raw, err := d.DialContext(ctx, "tcp", target)
	if err != nil {
		return nil, fmt.Errorf("metastore: raft dial %s: %w", target, err)
	}
	conn := tls.Client(raw, t.client)
	err = conn.HandshakeContext(ctx)
	if err == nil {
		err = readPreface(ctx, conn)
	}
	if err != nil {
		_ = raw.Close()
		t.logs.failed("dial", target, err)
		return nil, fmt.Errorf("metastore: raft tls with %s: %w", target, err)
	}
	return conn, nil
}

func readPreface(ctx context.Context, conn *tls.Conn) error {
	deadline, _ := ctx.Deadline()
	_ = conn.SetReadDeadline(deadline)
	var got [len(raftTLSPreface)]byte
	if _, err := io.ReadFull(conn, got[:]); err != nil {
		return err
	}
	if string(got[:]) != raftTLSPreface {
		return fmt.Errorf("unexpected preface %q", got[:])
	}
	return conn.SetReadDeadline(time.Time{})
}

// tlsConnection sends frames on one outgoing connection; dragonboat uses
// each from one goroutine.
type tlsConnection struct {
	conn *tls.Conn
	buf  []byte
}

var (
	_ raftio.IConnection         = (*tlsConnection)(nil)
	_ raftio.ISnapshotConnection = (*tlsConnection)(nil)
)

func (c *tlsConnection) Close() { _ = c.conn.Close() }

func (c *tlsConnection) SendMessageBatch(b pb.MessageBatch) error {
	frame := c.frame(frameBatch, b.SizeUpperLimit())
	n, err := b.MarshalTo(frame[frameHeaderBytes:])
	if err != nil {
		return fmt.Errorf("metastore: marshal raft batch: %w", err)
	}
	return c.send(frame[:frameHeaderBytes+n])
}

func (c *tlsConnection) SendChunk(ch pb.Chunk) error {
	frame := c.frame(frameChunk, ch.Size())
	n, err := ch.MarshalTo(frame[frameHeaderBytes:])
	if err != nil {
		return fmt.Errorf("metastore: marshal snapshot chunk: %w", err)
	}
	return c.send(frame[:frameHeaderBytes+n])
}

// frame returns a buffer for a header and up to size payload bytes.
func (c *tlsConnection) frame(kind byte, size int) []byte {
	need := frameHeaderBytes + size
	var f []byte
	if need <= raftFrameBufferBytes {
		if cap(c.buf) < need {
			c.buf = make([]byte, raftFrameBufferBytes)
		}
		f = c.buf[:need]
	} else {
		f = make([]byte, need)
	}
	f[0] = kind
	return f
}

func (c *tlsConnection) send(frame []byte) error {
	size := len(frame) - frameHeaderBytes
	if size > raftFrameMaxBytes {
		return fmt.Errorf("metastore: raft frame of %d bytes exceeds %d", size, raftFrameMaxBytes)
	}
	binary.BigEndian.PutUint32(frame[1:frameHeaderBytes], uint32(size))
	return writeWithin(c.conn, frame, frameIOTimeout(size))
}

func writeWithin(conn net.Conn, b []byte, d time.Duration) error {
	if err := conn.SetWriteDeadline(time.Now().Add(d)); err != nil {
		return err
	}
	_, err := conn.Write(b)
	return err
}

// frameIOTimeout is the time allowed to move a frame of size bytes.
func frameIOTimeout(size int) time.Duration {
	return raftFrameIOBase + time.Duration(size/raftFrameIOFloorBytesPerSecond)*time.Second
}
