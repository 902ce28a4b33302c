package remotes

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/access"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// CreateRequest registers a remote (api.md §2.18). Password is dropped once
// sealed.
type CreateRequest struct {
	Name     string
	URL      string
	Username string
	Password []byte
	CAPEM    string
	Limits   LimitsPatch
}

// Create registers a remote: every field is checked (400), the URL's host
// resolved through the address guard, then the node's preconditions
// (412: an encrypted API hop, a usable cluster secret), the write budget
// (429), and the password sealed; only the envelope is proposed.
func (s *Service) Create(ctx context.Context, p access.Principal, req CreateRequest) (View, error) {
	ctx = s.begin(ctx, ports.AuditRemoteCreate)
	v, err := s.create(ctx, p, req)
	s.record(ctx, p, req.Name, err)
	return v, err
}

func (s *Service) create(ctx context.Context, p access.Principal, req CreateRequest) (View, error) {
	if err := authorize(p); err != nil {
		return View{}, err
	}
	url, limits, err := s.checkCreate(ctx, req)
	if err != nil {
		return View{}, err
	}
	if err := s.preconditions(); err != nil {
		return View{}, err
	}
	if err := s.gates(ctx, meta.TypePutRemote, true); err != nil {
		return View{}, err
	}
	if err := s.admitWrite(); err != nil {
		return View{}, err
	}
	id, err := s.newID()
	if err != nil {
		return View{}, err
	}
	salt, mint, err := s.salt()
	if err != nil {
		return View{}, err
	}
	cred, err := s.seal(salt, ports.RemoteBinding{Name: req.Name, ID: id, URL: url, Username: req.Username, CAPEM: req.CAPEM}, req.Password)
	if err != nil {
		return View{}, sealFailure(err)
	}
	ev := &meta.PutRemote{Name: req.Name, ID: id, URL: url, Username: req.Username, Credential: cred, CAPEM: req.CAPEM, Limits: limits}
	if mint {
		ev.Salt = salt
	}
	res, err := s.propose(ctx, p, ev)
	if err != nil {
		return View{}, err
	}
	if !res.OK() {
		return View{}, refusal(res)
	}
	return s.writtenView(req.Name)
}

// checkCreate checks every field of a create and returns the canonical URL
// and the limits.
func (s *Service) checkCreate(ctx context.Context, req CreateRequest) (string, meta.RemoteLimits, error) {
	if err := meta.ValidRemoteName(req.Name); err != nil {
		return "", meta.RemoteLimits{}, invalidField("name must start with a lowercase letter and hold up to 63 of a-z 0-9 -")
	}
	if err := checkUsername(req.Username); err != nil {
		return "", meta.RemoteLimits{}, err
	}
	if err := checkPassword(req.Password); err != nil {
		return "", meta.RemoteLimits{}, err
	}
	if req.CAPEM != "" {
		if err := checkCAPEM(req.CAPEM); err != nil {
			return "", meta.RemoteLimits{}, err
		}
	}
	limits, err := req.Limits.apply(DefaultLimits())
	if err != nil {
		return "", meta.RemoteLimits{}, err
	}
	url, err := s.checkURL(ctx, req.URL)
	return url, limits, err
}

// checkURL canonicalizes and guards url (400 on a refusal).
func (s *Service) checkURL(ctx context.Context, url string) (string, error) {
	canonical, err := s.d.Transport.CheckURL(ctx, url)
	switch {
	case errors.Is(err, domain.ErrRemoteURL), errors.Is(err, domain.ErrDestinationRefused):
		return "", invalidField("url: %s", strings.TrimPrefix(err.Error(), "domain: "))
	case err != nil:
		return "", domain.Refuse(domain.ErrInvalidArgument, "url: the host does not resolve")
	}
	return canonical, nil
}

// preconditions are the 412s of a write carrying a password.
func (s *Service) preconditions() error {
	if !s.o.APIHopEncrypted {
		return domain.Refuse(domain.ErrPrecondition, MsgHopNeeded)
	}
	if err := s.d.Keyring.CanSeal(); err != nil {
		return domain.Refuse(domain.ErrPrecondition, strings.TrimPrefix(err.Error(), "domain: "))
	}
	return nil
}

// sealFailure: an unusable secret is a 412, anything else internal (500).
func sealFailure(err error) error {
	if errors.Is(err, domain.ErrRemoteSecret) {
		return domain.Refuse(domain.ErrPrecondition, err.Error())
	}
	return fmt.Errorf("remotes: sealing failed: %w", err)
}

// UpdateRequest changes a remote (api.md §2.18 PATCH): nil fields keep
// their value; CAPEM "" goes back to system roots.
type UpdateRequest struct {
	URL      *string
	Username *string
	Password []byte // nil = unchanged
	CAPEM    *string
	Limits   LimitsPatch
}

// Update changes a remote as a compare-and-set on its credential version.
// A new URL, username or CA needs the password again (the seal binds to
// them).
func (s *Service) Update(ctx context.Context, p access.Principal, name string, req UpdateRequest) (View, error) {
	ctx = s.begin(ctx, ports.AuditRemoteUpdate)
	v, err := s.update(ctx, p, name, req)
	s.record(ctx, p, name, err)
	return v, err
}

func (s *Service) update(ctx context.Context, p access.Principal, name string, req UpdateRequest) (View, error) {
	if err := authorize(p); err != nil {
		return View{}, err
	}
	r, ev, err := s.checkUpdate(ctx, name, req)
	if err != nil {
		return View{}, err
	}
	if req.Password != nil {
		if err := s.preconditions(); err != nil {
			return View{}, err
		}
	}
	if err := s.gates(ctx, meta.TypeUpdateRemote, true); err != nil {
		return View{}, err
	}
	if err := s.admitWrite(); err != nil {
		return View{}, err
	}
	if req.Password != nil {
		salt, _, err := s.salt()
		if err != nil {
			return View{}, err
		}
		b := ports.RemoteBinding{Name: r.Name, ID: r.ID, URL: pick(ev.URL, r.URL), Username: pick(ev.Username, r.Username), CAPEM: pick(ev.CAPEM, r.CAPEM)}
		cred, err := s.seal(salt, b, req.Password)
		if err != nil {
			return View{}, sealFailure(err)
		}
		ev.Credential = &cred
	}
	res, err := s.propose(ctx, p, ev)
	if err != nil {
		return View{}, err
	}
	if !res.OK() {
		return View{}, refusal(res)
	}
	return s.writtenView(name)
}

// checkUpdate reads the remote and checks the request's fields into an
// UpdateRemote without its credential.
func (s *Service) checkUpdate(ctx context.Context, name string, req UpdateRequest) (meta.Remote, *meta.UpdateRemote, error) {
	if req.URL == nil && req.Username == nil && req.Password == nil && req.CAPEM == nil && req.Limits.Empty() {
		return meta.Remote{}, nil, invalidField("nothing to change")
	}
	if req.Password == nil && (req.URL != nil || req.Username != nil || req.CAPEM != nil) {
		return meta.Remote{}, nil, invalidField("a new url, username or ca_pem needs the password again")
	}
	r, err := s.readRemote(name)
	if err != nil {
		return r, nil, err
	}
	ev := &meta.UpdateRemote{Name: name, ID: r.ID, ExpectedCredentialVersion: r.CredentialVersion,
		Username: req.Username, CAPEM: req.CAPEM}
	if req.Username != nil {
		if err := checkUsername(*req.Username); err != nil {
			return r, nil, err
		}
	}
	if req.CAPEM != nil && *req.CAPEM != "" {
		if err := checkCAPEM(*req.CAPEM); err != nil {
			return r, nil, err
		}
	}
	if req.Password != nil {
		if err := checkPassword(req.Password); err != nil {
			return r, nil, err
		}
	}
	if !req.Limits.Empty() {
		limits, err := req.Limits.apply(r.Limits)
		if err != nil {
			return r, nil, err
		}
		ev.Limits = &limits
	}
	if req.URL != nil {
		url, err := s.checkURL(ctx, *req.URL)
		if err != nil {
			return r, nil, err
		}
		ev.URL = &url
	}
	return r, ev, nil
}

func pick(v *string, keep string) string {
	if v == nil {
		return keep
	}
	return *v
}

// InUseError is the 409 of a delete without force while remote children
// use the remote: Links names them as parent/child.
type InUseError struct{ Links []string }

func (e *InUseError) Error() string {
	return fmt.Sprintf("remote is used by %d remote children", len(e.Links))
}

func (e *InUseError) Unwrap() error { return domain.ErrConflict }

// Delete deletes a remote. While remote children use it the answer is an
// *InUseError, unless force: then they hold in state remote_missing.
func (s *Service) Delete(ctx context.Context, p access.Principal, name string, force bool) error {
	ctx = s.begin(ctx, ports.AuditRemoteDelete)
	err := s.delete(ctx, p, name, force)
	s.record(ctx, p, name, err)
	return err
}

func (s *Service) delete(ctx context.Context, p access.Principal, name string, force bool) error {
	if err := authorize(p); err != nil {
		return err
	}
	r, err := s.readRemote(name)
	if err != nil {
		return err
	}
	links, err := s.links(r)
	if err != nil {
		return err
	}
	if len(links) > 0 && !force {
		return &InUseError{Links: links}
	}
	if err := s.gates(ctx, meta.TypeDeleteRemote, false); err != nil {
		return err
	}
	if err := s.admitWrite(); err != nil {
		return err
	}
	res, err := s.propose(ctx, p, &meta.DeleteRemote{Name: name, ID: r.ID})
	if err != nil {
		return err
	}
	if !res.OK() {
		return refusal(res)
	}
	return nil
}
