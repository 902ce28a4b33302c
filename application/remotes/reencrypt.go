package remotes

import (
	"context"
	"errors"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/access"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// Failed is one remote a re-encrypt could not re-seal.
type Failed struct {
	Name   string
	Reason string // key_unknown, open_failed, changed, seal_failed
}

// Reencrypted is POST /v1/cluster/reencrypt-remotes.
type Reencrypted struct {
	KeyVersion     string
	Reencrypted    []string
	AlreadyCurrent []string
	Failed         []Failed
}

// Reencrypt re-seals under the current key every password sealed under
// another (the previous secret opens it), each as a compare-and-set on its
// credential version: a remote changed meanwhile keeps its newer envelope.
// Safe to repeat.
func (s *Service) Reencrypt(ctx context.Context, p access.Principal) (Reencrypted, error) {
	ctx = s.begin(ctx, ports.AuditRemoteReencrypt)
	out, err := s.reencrypt(ctx, p)
	s.record(ctx, p, "", err)
	return out, err
}

func (s *Service) reencrypt(ctx context.Context, p access.Principal) (Reencrypted, error) {
	if err := authorize(p); err != nil {
		return Reencrypted{}, err
	}
	if err := s.d.Keyring.CanSeal(); err != nil {
		return Reencrypted{}, domain.Refuse(domain.ErrPrecondition, err.Error())
	}
	if err := s.gates(ctx, meta.TypeUpdateRemote, true); err != nil {
		return Reencrypted{}, err
	}
	if err := s.admitWrite(); err != nil {
		return Reencrypted{}, err
	}
	out := Reencrypted{Reencrypted: []string{}, AlreadyCurrent: []string{}, Failed: []Failed{}}
	salt, found, err := s.d.Store.RemoteSalt()
	if err != nil {
		return out, readFailure(err)
	}
	all, err := s.d.Store.Remotes()
	if err != nil {
		return out, readFailure(err)
	}
	if !found {
		return out, nil
	}
	if out.KeyVersion, err = s.d.Keyring.KeyVersion(salt); err != nil {
		return out, domain.Refuse(domain.ErrPrecondition, err.Error())
	}
	for _, r := range all {
		if r.KeyVersion == out.KeyVersion {
			out.AlreadyCurrent = append(out.AlreadyCurrent, r.Name)
			continue
		}
		reason, err := s.reseal(ctx, p, salt, r)
		switch {
		case err != nil:
			return out, err
		case reason != "":
			out.Failed = append(out.Failed, Failed{Name: r.Name, Reason: reason})
		default:
			out.Reencrypted = append(out.Reencrypted, r.Name)
		}
	}
	return out, nil
}

// reseal opens r's password and proposes it sealed under the current key.
// It returns a reason when r could not be re-sealed, an error when the
// cluster could not be asked.
func (s *Service) reseal(ctx context.Context, p access.Principal, salt []byte, r meta.Remote) (string, error) {
	b := binding(r)
	pw, err := s.d.Keyring.Open(salt, b, meta.RemoteCredential{SealedPassword: r.SealedPassword, KeyVersion: r.KeyVersion, Fingerprint: r.Fingerprint})
	switch {
	case errors.Is(err, domain.ErrRemoteKeyUnknown):
		return "key_unknown", nil
	case err != nil:
		return "open_failed", nil
	}
	if s.d.ResealOpened != nil {
		s.d.ResealOpened()
	}
	cred, err := s.seal(salt, b, pw)
	clear(pw)
	if err != nil {
		return "seal_failed", nil
	}
	res, err := s.propose(ctx, p, &meta.UpdateRemote{Name: r.Name, ID: r.ID, ExpectedCredentialVersion: r.CredentialVersion, Credential: &cred})
	switch {
	case err != nil:
		return "", err
	case !res.OK():
		return "changed", nil
	}
	return "", nil
}

// binding is what r's seal is bound to.
func binding(r meta.Remote) ports.RemoteBinding {
	return ports.RemoteBinding{Name: r.Name, ID: r.ID, URL: r.URL, Username: r.Username, CAPEM: r.CAPEM}
}
