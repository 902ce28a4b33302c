package metastore

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"time"

	"github.com/lni/dragonboat/v4/config"
	"go.uber.org/zap"
)

// The settings the TLS files come from, named in every error about them.
const (
	settingTLSCertFile = "security.cluster_tls_cert_file"
	settingTLSKeyFile  = "security.cluster_tls_key_file"
	settingTLSCAFile   = "security.cluster_tls_ca_file"
)

// errPeerName: a peer's certificate chains to the bundle but does not carry
// the cluster name.
var errPeerName = errors.New("raft peer certificate lacks DNS SAN " + clusterTLSName)

// raftTLS is the mutual-TLS material of the Raft transport (internals
// §12.3), read once at NewHost: a restart is the reload.
type raftTLS struct {
	certFile, keyFile, caFile string
	cert                      tls.Certificate
	roots                     *x509.CertPool // the CA bundle, one or more CAs
	caCount                   int
	// selfCheck: why this node's own certificate does not verify against its
	// own bundle (nil when it does). Not fatal: during a CA rotation the
	// bundle is what peers present, and only peers judge this node.
	selfCheck error
}

// loadRaftTLS reads and checks the three files; nil, nil when none is set.
func loadRaftTLS(cfg HostConfig) (*raftTLS, error) {
	set := 0
	for _, f := range []string{cfg.TLSCertFile, cfg.TLSKeyFile, cfg.TLSCAFile} {
		if f != "" {
			set++
		}
	}
	switch set {
	case 0:
		return nil, nil
	case 1, 2:
		return nil, fmt.Errorf("metastore: %s, %s and %s must be set together: %w",
			settingTLSCertFile, settingTLSKeyFile, settingTLSCAFile, ErrBadConfig)
	}
	r := &raftTLS{certFile: cfg.TLSCertFile, keyFile: cfg.TLSKeyFile, caFile: cfg.TLSCAFile}
	if err := r.loadCert(); err != nil {
		return nil, err
	}
	if err := r.loadBundle(); err != nil {
		return nil, err
	}
	r.selfCheck = r.verifySelf(time.Now())
	return r, nil
}

func badTLSFile(setting, path string, err error) error {
	return fmt.Errorf("metastore: %s %q: %w (%w)", setting, path, err, ErrBadConfig)
}

// loadCert reads this node's certificate (with any intermediates) and key,
// and refuses a certificate peers would refuse whatever their bundle.
func (r *raftTLS) loadCert() error {
	certPEM, err := os.ReadFile(r.certFile)
	if err != nil {
		return badTLSFile(settingTLSCertFile, r.certFile, err)
	}
	if len(pemCerts(certPEM)) == 0 {
		return badTLSFile(settingTLSCertFile, r.certFile, errors.New("holds no PEM certificate"))
	}
	keyPEM, err := os.ReadFile(r.keyFile)
	if err != nil {
		return badTLSFile(settingTLSKeyFile, r.keyFile, err)
	}
	if b, _ := pem.Decode(keyPEM); b == nil {
		return badTLSFile(settingTLSKeyFile, r.keyFile, errors.New("holds no PEM private key"))
	}
	r.cert, err = tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return badTLSFile(settingTLSKeyFile, r.keyFile,
			fmt.Errorf("is not the private key of %s %q: %w", settingTLSCertFile, r.certFile, err))
	}
	leaf := r.cert.Leaf
	if leaf == nil {
		if leaf, err = x509.ParseCertificate(r.cert.Certificate[0]); err != nil {
			return badTLSFile(settingTLSCertFile, r.certFile, err)
		}
		r.cert.Leaf = leaf
	}
	if err := leaf.VerifyHostname(clusterTLSName); err != nil {
		return badTLSFile(settingTLSCertFile, r.certFile,
			fmt.Errorf("the certificate must carry DNS SAN %s: %w", clusterTLSName, err))
	}
	if !allowsUsage(leaf, x509.ExtKeyUsageServerAuth) || !allowsUsage(leaf, x509.ExtKeyUsageClientAuth) {
		return badTLSFile(settingTLSCertFile, r.certFile,
			errors.New("the certificate must allow both serverAuth and clientAuth extended key usages"))
	}
	return nil
}

// loadBundle reads the CA bundle: every certificate in it is trusted.
func (r *raftTLS) loadBundle() error {
	caPEM, err := os.ReadFile(r.caFile)
	if err != nil {
		return badTLSFile(settingTLSCAFile, r.caFile, err)
	}
	r.roots = x509.NewCertPool()
	for i, der := range pemCerts(caPEM) {
		ca, err := x509.ParseCertificate(der)
		if err != nil {
			return badTLSFile(settingTLSCAFile, r.caFile, fmt.Errorf("certificate %d: %w", i+1, err))
		}
		r.roots.AddCert(ca)
		r.caCount++
	}
	if r.caCount == 0 {
		return badTLSFile(settingTLSCAFile, r.caFile, errors.New("holds no PEM certificate"))
	}
	return nil
}

// verifySelf checks this node's certificate the way a peer with the same
// bundle would.
func (r *raftTLS) verifySelf(now time.Time) error {
	inter := x509.NewCertPool()
	for _, der := range r.cert.Certificate[1:] {
		if c, err := x509.ParseCertificate(der); err == nil {
			inter.AddCert(c)
		}
	}
	_, err := r.cert.Leaf.Verify(x509.VerifyOptions{
		DNSName: clusterTLSName, Roots: r.roots, Intermediates: inter, CurrentTime: now,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	return err
}

// pemCerts returns the DER bytes of every CERTIFICATE block in b.
func pemCerts(b []byte) [][]byte {
	var out [][]byte
	for {
		var blk *pem.Block
		if blk, b = pem.Decode(b); blk == nil {
			return out
		}
		if blk.Type == "CERTIFICATE" {
			out = append(out, blk.Bytes)
		}
	}
}

// allowsUsage: a certificate without extended key usages allows any.
func allowsUsage(c *x509.Certificate, u x509.ExtKeyUsage) bool {
	if len(c.ExtKeyUsage) == 0 && len(c.UnknownExtKeyUsage) == 0 {
		return true
	}
	return slices.Contains(c.ExtKeyUsage, u) || slices.Contains(c.ExtKeyUsage, x509.ExtKeyUsageAny)
}

// serverConfig accepts a peer whose certificate chains to the bundle, allows
// clientAuth and carries the cluster name.
func (r *raftTLS) serverConfig() *tls.Config {
	return &tls.Config{
		MinVersion:       tls.VersionTLS13,
		Certificates:     []tls.Certificate{r.cert},
		ClientAuth:       tls.RequireAndVerifyClientCert,
		ClientCAs:        r.roots,
		VerifyConnection: verifyClusterName,
	}
}

// clientConfig checks the peer against the cluster name, never the address
// it dialed: all nodes may share one certificate, membership is the identity.
// It presents this node's certificate even when the peer's bundle names
// other CAs (Go would send none), so the peer logs why it refuses it.
func (r *raftTLS) clientConfig() *tls.Config {
	cert := r.cert
	return &tls.Config{
		MinVersion: tls.VersionTLS13,
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			return &cert, nil
		},
		RootCAs:          r.roots,
		ServerName:       clusterTLSName,
		VerifyConnection: verifyClusterName,
	}
}

func verifyClusterName(cs tls.ConnectionState) error {
	if len(cs.PeerCertificates) == 0 {
		return errPeerName
	}
	if err := cs.PeerCertificates[0].VerifyHostname(clusterTLSName); err != nil {
		return fmt.Errorf("%w: %w", errPeerName, err)
	}
	return nil
}

// apply switches the NodeHost to mutual TLS: dragonboat's own settings name
// the files, and the transport factory runs Raft over TLS with the checks
// above (dragonboat's TCP transport would check the dialed host instead).
func (r *raftTLS) apply(nhc *config.NodeHostConfig, log *zap.Logger) {
	nhc.MutualTLS = true
	nhc.CertFile, nhc.KeyFile, nhc.CAFile = r.certFile, r.keyFile, r.caFile
	nhc.Expert.TransportFactory = &tlsTransportFactory{server: r.serverConfig(), client: r.clientConfig(), log: log}
}

// logTransport writes the one line saying which transport this node runs:
// a warning when Raft runs in plaintext on an address other nodes can
// reach, info when it is bound to loopback (a single node) or mutual TLS.
// Dragonboat's own "mutual TLS disabled" warning is logged at info
// (logger.go): this line is the one that knows the address.
func logTransport(log *zap.Logger, r *raftTLS, raftAddr string) {
	if r == nil {
		if loopbackAddr(raftAddr) {
			log.Info("raft transport", zap.String("tls", "plaintext"), zap.String("addr", raftAddr))
			return
		}
		log.Warn("raft transport runs in plaintext on an address other nodes can reach: "+
			"anyone who can connect to it can read and write the cluster's metadata (turn security on)",
			zap.String("tls", "plaintext"), zap.String("addr", raftAddr))
		return
	}
	log.Info("raft transport", zap.String("tls", "mutual"), zap.String("ca_file", r.caFile),
		zap.Int("cas", r.caCount), zap.String("peer_name", clusterTLSName))
	if r.selfCheck != nil {
		log.Warn("raft transport: this node's certificate does not verify against its own CA bundle; "+
			"peers trusting the same bundle will refuse it", zap.String("cert_file", r.certFile), zap.Error(r.selfCheck))
	}
}

// loopbackAddr reports whether host:port names a loopback address.
func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
