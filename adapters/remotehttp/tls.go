package remotehttp

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"

	"github.com/narad/narad/domain"
)

// tlsConfig is the client TLS of internals.md §7.7: TLS 1.2 or newer, key
// exchange X25519MLKEM768 or X25519, verification always on against the
// remote's CA bundle alone when it has one, else the system roots, the
// server name from the URL, HTTP/1.1 only.
func tlsConfig(serverName, caPEM string) (*tls.Config, error) {
	roots, err := parseCABundle(caPEM)
	if err != nil {
		return nil, err
	}
	return &tls.Config{
		MinVersion:       tls.VersionTLS12,
		CurvePreferences: []tls.CurveID{tls.X25519MLKEM768, tls.X25519},
		RootCAs:          roots, // nil: the system roots
		ServerName:       serverName,
		NextProtos:       []string{"http/1.1"},
	}, nil
}

// parseCABundle parses a CA bundle of 1-16 PEM certificates and nothing
// else (api.md §2.18, `ca_pem`); "" is no bundle (nil pool).
func parseCABundle(bundle string) (*x509.CertPool, error) {
	if bundle == "" {
		return nil, nil
	}
	if len(bundle) > caBundleMaxBytes {
		return nil, caError(fmt.Sprintf("is larger than %d bytes", caBundleMaxBytes))
	}
	pool := x509.NewCertPool()
	rest := bytes.TrimSpace([]byte(bundle))
	count := 0
	for len(rest) > 0 {
		// pem.Decode skips text before a block: refuse it here instead.
		if !bytes.HasPrefix(rest, []byte("-----BEGIN ")) {
			return nil, caError("holds text that is not a PEM block")
		}
		block, after := pem.Decode(rest)
		if block == nil {
			return nil, caError("holds a malformed PEM block")
		}
		if block.Type != "CERTIFICATE" || len(block.Headers) > 0 {
			return nil, caError("holds a PEM block that is not a certificate")
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, caError("holds a certificate that does not parse")
		}
		if count++; count > caCertsMaxCount {
			return nil, caError(fmt.Sprintf("holds more than %d certificates", caCertsMaxCount))
		}
		pool.AddCert(cert)
		rest = bytes.TrimSpace(after)
	}
	if count == 0 {
		return nil, caError("holds no certificate")
	}
	return pool, nil
}

// caError wraps domain.ErrRemoteURL with the rule a CA bundle broke.
func caError(rule string) error {
	return fmt.Errorf("%w: ca bundle %s", domain.ErrRemoteURL, rule)
}
