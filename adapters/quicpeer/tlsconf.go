package quicpeer

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"time"

	"github.com/quic-go/quic-go"
)

// newCertificate makes the process's ephemeral self-signed ECDSA P-256
// certificate, valid for certLifetime from now. It carries no trust: dialers
// check neither issuer nor dates (F37); the cluster proof authenticates.
func newCertificate(now time.Time) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("quicpeer: certificate key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("quicpeer: certificate serial: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "narad-node"},
		NotBefore:    now.Add(-time.Minute),
		NotAfter:     now.Add(certLifetime),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("quicpeer: self-sign certificate: %w", err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

// serverTLS is the listener's TLS 1.3 configuration.
func serverTLS(cert tls.Certificate) *tls.Config {
	return &tls.Config{
		MinVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{cert},
		NextProtos:   []string{alpnProtocol},
	}
}

// clientTLS is the dialer's TLS 1.3 configuration. Chain and dates are not
// verified on purpose (internals.md §10.2, F37): the per-stream HMAC proof,
// bound to this TLS session by the exporter, is the authentication.
func clientTLS() *tls.Config {
	return &tls.Config{
		MinVersion:         tls.VersionTLS13,
		NextProtos:         []string{alpnProtocol},
		InsecureSkipVerify: true, //nolint:gosec // trust is the cluster secret, see doc.go
		ServerName:         "narad-node",
	}
}

// quicConfig is the QUIC configuration of both ends (internals.md §10.1).
func quicConfig() *quic.Config {
	return &quic.Config{
		HandshakeIdleTimeout:           dialTimeout,
		MaxIdleTimeout:                 quicIdleTimeout,
		KeepAlivePeriod:                quicKeepAlivePeriod,
		MaxIncomingStreams:             quicMaxIncomingStreams,
		MaxIncomingUniStreams:          -1,
		InitialStreamReceiveWindow:     quicStreamWindowBytes,
		MaxStreamReceiveWindow:         quicStreamWindowMaxBytes,
		InitialConnectionReceiveWindow: quicConnWindowBytes,
		MaxConnectionReceiveWindow:     quicConnWindowMaxBytes,
	}
}

// statelessResetKey derives the QUIC stateless-reset key from the cluster
// secret, so every node can verify a restarted peer's resets.
func statelessResetKey(secret []byte) *quic.StatelessResetKey {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(statelessResetContext))
	var k quic.StatelessResetKey
	copy(k[:], m.Sum(nil))
	return &k
}
