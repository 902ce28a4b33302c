package remotes

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"fmt"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
)

// LimitsPatch is a request's limits: nil fields keep their value (the
// default at create).
type LimitsPatch struct {
	MaxInFlight       *int32
	RequestTimeoutMs  *int64
	IdleConnTimeoutMs *int64
	ConnMaxAgeMs      *int64
	CheckIntervalMs   *int64
	Compression       *string
}

// Empty reports whether the patch changes nothing.
func (l LimitsPatch) Empty() bool {
	return l.MaxInFlight == nil && l.RequestTimeoutMs == nil && l.IdleConnTimeoutMs == nil &&
		l.ConnMaxAgeMs == nil && l.CheckIntervalMs == nil && l.Compression == nil
}

// DefaultLimits are a new remote's limits (internals.md §7.1).
func DefaultLimits() meta.RemoteLimits {
	return meta.RemoteLimits{MaxInFlight: maxInFlightDefault, RequestTimeoutMs: requestTimeoutMsDefault,
		IdleConnTimeoutMs: idleConnTimeoutMsDefault, ConnMaxAgeMs: connMaxAgeMsDefault,
		CheckIntervalMs: checkIntervalMsDefault, Compression: compressionDefault}
}

// limitRange is one limit's bounds, for the 400 that names it.
type limitRange struct {
	name     string
	min, max int64
}

var (
	maxInFlightRange     = limitRange{"limits.max_in_flight", 1, 256}
	requestTimeoutRange  = limitRange{"limits.request_timeout_ms", 5_000, 120_000}
	idleConnTimeoutRange = limitRange{"limits.idle_conn_timeout_ms", 1_000, 300_000}
	connMaxAgeRange      = limitRange{"limits.conn_max_age_ms", 10_000, 3_600_000}
	checkIntervalRange   = limitRange{"limits.check_interval_ms", 10_000, 3_600_000}
)

func (r limitRange) check(v int64) error {
	if v < r.min || v > r.max {
		return invalidField("%s must be %d to %d", r.name, r.min, r.max)
	}
	return nil
}

// apply returns base with the patch's fields, each checked.
func (l LimitsPatch) apply(base meta.RemoteLimits) (meta.RemoteLimits, error) {
	out := base
	if l.MaxInFlight != nil {
		if err := maxInFlightRange.check(int64(*l.MaxInFlight)); err != nil {
			return out, err
		}
		out.MaxInFlight = *l.MaxInFlight
	}
	for _, f := range []struct {
		v   *int64
		r   limitRange
		dst *int64
	}{
		{l.RequestTimeoutMs, requestTimeoutRange, &out.RequestTimeoutMs},
		{l.IdleConnTimeoutMs, idleConnTimeoutRange, &out.IdleConnTimeoutMs},
		{l.ConnMaxAgeMs, connMaxAgeRange, &out.ConnMaxAgeMs},
		{l.CheckIntervalMs, checkIntervalRange, &out.CheckIntervalMs},
	} {
		if f.v == nil {
			continue
		}
		if err := f.r.check(*f.v); err != nil {
			return out, err
		}
		*f.dst = *f.v
	}
	if l.Compression != nil {
		if *l.Compression != "none" && *l.Compression != "zstd" {
			return out, invalidField("limits.compression must be none or zstd")
		}
		out.Compression = *l.Compression
	}
	return out, nil
}

// checkPassword checks a password's length; the message never holds it.
func checkPassword(pw []byte) error {
	if len(pw) < passwordMinBytes || len(pw) > passwordMaxBytes {
		return invalidField("password must be %d to %d bytes", passwordMinBytes, passwordMaxBytes)
	}
	return nil
}

// checkUsername: 1-64 of A-Z a-z 0-9 . _ -
func checkUsername(u string) error {
	if u == "" || len(u) > usernameMaxChars {
		return invalidField("username must be 1 to %d characters", usernameMaxChars)
	}
	for i := 0; i < len(u); i++ {
		c := u[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return invalidField("username may hold only A-Z a-z 0-9 . _ -")
		}
	}
	return nil
}

// checkCAPEM: 1-16 PEM certificates that parse, and nothing else, within
// 64 KiB.
func checkCAPEM(ca string) error {
	if len(ca) > caPEMMaxBytes {
		return invalidField("ca_pem is over %d bytes", caPEMMaxBytes)
	}
	rest, n := []byte(ca), 0
	for {
		rest = bytes.TrimSpace(rest)
		if len(rest) == 0 {
			break
		}
		block, tail := pem.Decode(rest)
		if block == nil || block.Type != "CERTIFICATE" {
			return invalidField("ca_pem must hold PEM certificates and nothing else")
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			return invalidField("ca_pem certificate %d does not parse", n+1)
		}
		n++
		rest = tail
	}
	if n < 1 || n > caCertsMaxCount {
		return invalidField("ca_pem must hold 1 to %d certificates", caCertsMaxCount)
	}
	return nil
}

func invalidField(format string, args ...any) error {
	return domain.Refuse(domain.ErrInvalidArgument, fmt.Sprintf(format, args...))
}
