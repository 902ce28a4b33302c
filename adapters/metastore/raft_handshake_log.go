package metastore

import (
	"crypto/tls"
	"errors"
	"net"
	"sync"
	"time"

	"go.uber.org/zap"
)

// handshakeLogs logs failed Raft handshakes: a certificate problem as an
// error ("bad certificate", internals §12.3), anything else as a warning;
// per peer host at most one line per raftHandshakeLogEvery, with the count
// of failures it stands for.
type handshakeLogs struct {
	log *zap.Logger
	now func() time.Time

	mu   sync.Mutex
	last map[string]handshakeLogState
}

type handshakeLogState struct {
	at         time.Time
	suppressed int
}

func newHandshakeLogs(log *zap.Logger) *handshakeLogs {
	return &handshakeLogs{log: log, now: time.Now, last: map[string]handshakeLogState{}}
}

// failed records one failed handshake with peer (host:port) on side
// ("dial" or "accept").
func (h *handshakeLogs) failed(side, peer string, err error) {
	host, _, splitErr := net.SplitHostPort(peer)
	if splitErr != nil {
		host = peer
	}
	refused, cert := certificateFailure(err)
	key := host + "/" + side + "/" + refused
	h.mu.Lock()
	st := h.last[key]
	now := h.now()
	if !st.at.IsZero() && now.Sub(st.at) < raftHandshakeLogEvery {
		st.suppressed++
		h.last[key] = st
		h.mu.Unlock()
		return
	}
	for k, old := range h.last { // forget quiet peers: the map stays small
		if now.Sub(old.at) >= raftHandshakeLogEvery {
			delete(h.last, k)
		}
	}
	h.last[key] = handshakeLogState{at: now}
	h.mu.Unlock()

	fields := []zap.Field{zap.String("side", side), zap.String("peer", peer), zap.Error(err)}
	if st.suppressed > 0 {
		fields = append(fields, zap.Int("failures_since_last_line", st.suppressed))
	}
	if !cert {
		h.log.Warn("raft peer handshake failed", fields...)
		return
	}
	fields = append(fields, zap.String("refused", refused), zap.String("hint",
		"every node's certificate must chain to every peer's "+settingTLSCAFile+
			", carry DNS SAN "+clusterTLSName+" and allow serverAuth and clientAuth"))
	h.log.Error("raft peer handshake failed: bad certificate", fields...)
}

// certificateFailure classifies a handshake error: refused says whose
// certificate was refused ("peer": this node refused the peer's; "self": the
// peer sent an alert, refusing this node's), cert whether it was a
// certificate problem at all.
func certificateFailure(err error) (refused string, cert bool) {
	var verr *tls.CertificateVerificationError
	var op *net.OpError
	switch {
	case errors.As(err, &verr), errors.Is(err, errPeerName):
		return "peer", true
	case errors.As(err, &op) && op.Op == "remote error":
		return "self", true
	default:
		return "", false
	}
}
