package meta

import "strings"

// RemoteCredential is a sealed password with the key that sealed it. The
// sealing node drops the plaintext; only this travels through Raft.
type RemoteCredential struct {
	SealedPassword []byte `json:"sealed_password"`
	KeyVersion     string `json:"key_version"`
	Fingerprint    string `json:"fingerprint"`
}

// PutRemote (type 35) registers a remote. The first remote of the cluster
// carries the 32-byte salt the proposer minted; later ones carry none.
type PutRemote struct {
	Name       string           `json:"name"`
	ID         string           `json:"id"`
	URL        string           `json:"url"`
	Username   string           `json:"username"`
	Credential RemoteCredential `json:"credential"`
	CAPEM      string           `json:"ca_pem,omitempty"`
	Limits     RemoteLimits     `json:"limits"`
	Salt       []byte           `json:"salt,omitempty"`
}

// UpdateRemote (type 36) changes a remote as a compare-and-set on its
// credential version. A new URL, username or CA needs a new credential (the
// seal binds to them). Nil fields keep their value.
type UpdateRemote struct {
	Name                      string            `json:"name"`
	ID                        string            `json:"id"`
	ExpectedCredentialVersion int64             `json:"expected_credential_version"`
	URL                       *string           `json:"url,omitempty"`
	Username                  *string           `json:"username,omitempty"`
	CAPEM                     *string           `json:"ca_pem,omitempty"`
	Credential                *RemoteCredential `json:"credential,omitempty"`
	Limits                    *RemoteLimits     `json:"limits,omitempty"`
}

// DeleteRemote (type 37) deletes remote incarnation ID.
type DeleteRemote struct {
	Name string `json:"name"`
	ID   string `json:"id"`
}

func (*PutRemote) Type() EntryType    { return TypePutRemote }
func (*UpdateRemote) Type() EntryType { return TypeUpdateRemote }
func (*DeleteRemote) Type() EntryType { return TypeDeleteRemote }

func (e *PutRemote) Subject() string    { return "remote " + e.Name }
func (e *UpdateRemote) Subject() string { return "remote " + e.Name }
func (e *DeleteRemote) Subject() string { return "remote " + e.Name }

// ValidRemoteName: a lowercase letter, then up to 62 of a-z 0-9 '-'.
func ValidRemoteName(name string) error {
	if name == "" || len(name) > remoteNameMaxChars || name[0] < 'a' || name[0] > 'z' {
		return invalid("remote name %q must start with a lowercase letter, up to %d characters", name, remoteNameMaxChars)
	}
	for i := 1; i < len(name); i++ {
		c := name[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return invalid("remote name %q has a character outside a-z 0-9 -", name)
		}
	}
	return nil
}

func validRemoteRef(name, id string) error {
	if err := ValidRemoteName(name); err != nil {
		return err
	}
	if !isLowerHex(id, topicIDHexChars) {
		return invalid("remote id %q is not 16 lowercase hex characters", id)
	}
	return nil
}

// validRemoteURL checks the stored canonical shape; the ingress node has
// already resolved and guarded the host.
func validRemoteURL(u string) error {
	if !strings.HasPrefix(u, "https://") || len(u) > remoteURLMaxBytes || strings.ContainsAny(u, "?#@ ") {
		return invalid("remote url must be https://host[:port][/path] within %d bytes", remoteURLMaxBytes)
	}
	return nil
}

func (c RemoteCredential) validate() error {
	if len(c.SealedPassword) == 0 || len(c.SealedPassword) > sealedMaxBytes {
		return invalid("sealed password of %d bytes outside 1..%d", len(c.SealedPassword), sealedMaxBytes)
	}
	if !isLowerHex(c.KeyVersion, 16) || !isLowerHex(c.Fingerprint, fingerprintHexChars) {
		return invalid("key version or fingerprint is not lowercase hex of the right length")
	}
	return nil
}

func (l RemoteLimits) validate() error {
	switch {
	case l.MaxInFlight < 1 || l.MaxInFlight > 256:
		return invalid("max_in_flight %d outside 1..256", l.MaxInFlight)
	case l.RequestTimeoutMs < 5_000 || l.RequestTimeoutMs > 120_000:
		return invalid("request_timeout_ms %d outside 5000..120000", l.RequestTimeoutMs)
	case l.IdleConnTimeoutMs < 1_000 || l.IdleConnTimeoutMs > 300_000:
		return invalid("idle_conn_timeout_ms %d outside 1000..300000", l.IdleConnTimeoutMs)
	case l.ConnMaxAgeMs < 10_000 || l.ConnMaxAgeMs > 3_600_000:
		return invalid("conn_max_age_ms %d outside 10000..3600000", l.ConnMaxAgeMs)
	case l.CheckIntervalMs < 10_000 || l.CheckIntervalMs > 3_600_000:
		return invalid("check_interval_ms %d outside 10000..3600000", l.CheckIntervalMs)
	case l.Compression != "none" && l.Compression != "zstd":
		return invalid("compression %q is not none or zstd", l.Compression)
	}
	return nil
}

func validRemoteIdentity(url, username, ca string) error {
	if err := validRemoteURL(url); err != nil {
		return err
	}
	if err := checkCharset("remote username", username, UsernameMaxChars); err != nil {
		return err
	}
	if len(ca) > remoteCAMaxBytes {
		return invalid("ca_pem of %d bytes above %d", len(ca), remoteCAMaxBytes)
	}
	return nil
}

// Validate checks every field.
func (e *PutRemote) Validate() error {
	if err := validRemoteRef(e.Name, e.ID); err != nil {
		return err
	}
	if err := validRemoteIdentity(e.URL, e.Username, e.CAPEM); err != nil {
		return err
	}
	if len(e.Salt) != 0 && len(e.Salt) != remoteSaltBytes {
		return invalid("salt of %d bytes, want %d", len(e.Salt), remoteSaltBytes)
	}
	if err := e.Credential.validate(); err != nil {
		return err
	}
	return e.Limits.validate()
}

// Validate checks the reference and every field present.
func (e *UpdateRemote) Validate() error {
	if err := validRemoteRef(e.Name, e.ID); err != nil {
		return err
	}
	if e.URL == nil && e.Username == nil && e.CAPEM == nil && e.Credential == nil && e.Limits == nil {
		return invalid("nothing to change")
	}
	if e.Credential != nil {
		if err := e.Credential.validate(); err != nil {
			return err
		}
	} else if e.URL != nil || e.Username != nil || e.CAPEM != nil {
		return invalid("a new url, username or ca_pem needs the password again")
	}
	if e.Limits != nil {
		return e.Limits.validate()
	}
	return nil
}

// Validate checks the reference.
func (e *DeleteRemote) Validate() error { return validRemoteRef(e.Name, e.ID) }
