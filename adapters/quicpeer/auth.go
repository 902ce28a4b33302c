package quicpeer

import (
	"crypto/hmac"
	"crypto/sha256"
	"fmt"

	"github.com/quic-go/quic-go"
)

// proofs are one connection's two HMAC proofs. Both depend only on the
// secret and the TLS session, so they are computed once per connection and
// checked on every stream.
type proofs struct {
	client []byte
	server []byte
}

// connProofs exports ekmBytes of keying material from conn's TLS 1.3
// session and computes HMAC-SHA256(secret, role || ekm) for both roles.
func connProofs(conn *quic.Conn, secret []byte) (proofs, error) {
	state := conn.ConnectionState().TLS
	ekm, err := state.ExportKeyingMaterial(ekmLabel, nil, ekmBytes)
	if err != nil {
		return proofs{}, fmt.Errorf("quicpeer: export keying material: %w", err)
	}
	return proofs{client: proof(secret, roleClient, ekm), server: proof(secret, roleServer, ekm)}, nil
}

func proof(secret []byte, role string, ekm []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(role))
	m.Write(ekm)
	return m.Sum(nil)
}

// checkProof reports whether f is an auth frame carrying want.
func checkProof(f frame, want []byte) bool {
	return f.Type == typeAuth && hmac.Equal(f.Payload, want)
}

// proofPayloadMaxBytes is the payload cap of the first frame of a stream.
const proofPayloadMaxBytes = proofFrameMaxBytes - frameHeaderBytes
