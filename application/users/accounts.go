package users

import (
	"cmp"
	"context"
	"slices"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/access"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// CreateRequest is a create as the client sent it (api.md §2.16).
type CreateRequest struct {
	Username string
	Password string
	Grants   []meta.Grant
}

// Create makes a non-root account and answers it as stored. Errors, in the
// route table's order: ErrForbidden (admin), ErrInvalidArgument (username,
// password, grants), ErrForbidden (conferring admin without being root),
// ErrUserExists, ErrUnavailable.
func (s *Service) Create(ctx context.Context, p access.Principal, req CreateRequest) (meta.User, error) {
	u, err := s.create(ctx, p, req)
	s.record(ports.AuditUserCreate, p, req.Username, "", err)
	return u, err
}

func (s *Service) create(ctx context.Context, p access.Principal, req CreateRequest) (meta.User, error) {
	if err := checkCreate(p, req); err != nil {
		return meta.User{}, err
	}
	hash, err := s.hash(ctx, req.Password)
	if err != nil {
		return meta.User{}, err
	}
	ev := &meta.CreateUser{Username: req.Username, PasswordHash: hash, Grants: cloneGrants(req.Grants)}
	res, err := s.propose(ctx, p, ev)
	if err != nil {
		return meta.User{}, err
	}
	switch res.Code {
	case meta.CodeOK:
	case meta.CodeExists:
		return meta.User{}, domain.ErrUserExists
	default:
		return meta.User{}, unexpected("create", req.Username, res)
	}
	u, err := s.readUser(req.Username)
	if err != nil {
		return meta.User{}, err
	}
	return public(u), nil
}

// checkCreate applies the create's rules in the order api.md §2.16 lists
// its errors.
func checkCreate(p access.Principal, req CreateRequest) error {
	if err := adminOnly(p); err != nil {
		return err
	}
	if err := access.ValidUsername(req.Username); err != nil {
		return err
	}
	if err := access.ValidPassword("password", req.Password); err != nil {
		return err
	}
	if err := access.ValidGrants(req.Grants); err != nil {
		return err
	}
	return access.CheckConfer(p, req.Grants)
}

// List answers every account, ordered by username (empty, not nil, when
// there is none). Errors: ErrForbidden, ErrUnavailable.
func (s *Service) List(_ context.Context, p access.Principal) ([]meta.User, error) {
	if err := adminOnly(p); err != nil {
		return nil, err
	}
	all, err := s.store.Users()
	if err != nil {
		return nil, readFailure(err)
	}
	out := make([]meta.User, 0, len(all))
	for _, u := range all {
		out = append(out, public(u))
	}
	slices.SortFunc(out, func(a, b meta.User) int { return cmp.Compare(a.Username, b.Username) })
	return out, nil
}

// Get answers one account. Errors: ErrForbidden, ErrUserNotFound,
// ErrUnavailable.
func (s *Service) Get(_ context.Context, p access.Principal, name string) (meta.User, error) {
	if err := adminOnly(p); err != nil {
		return meta.User{}, err
	}
	u, err := s.readUser(name)
	if err != nil {
		return meta.User{}, err
	}
	return public(u), nil
}

// Delete removes an account and clears the owner of every topic it owned
// (entry type 32). Errors, in order: ErrForbidden (admin), ErrUserNotFound,
// ErrForbidden (root, own account), ErrUnavailable.
func (s *Service) Delete(ctx context.Context, p access.Principal, name string) error {
	err := s.delete(ctx, p, name)
	s.record(ports.AuditUserDelete, p, name, "", err)
	return err
}

func (s *Service) delete(ctx context.Context, p access.Principal, name string) error {
	if err := adminOnly(p); err != nil {
		return err
	}
	target, err := s.readUser(name)
	if err != nil {
		return err
	}
	if err := access.CheckDelete(p, target); err != nil {
		return err
	}
	res, err := s.propose(ctx, p, &meta.DeleteUserReleaseTopics{Username: name})
	if err != nil {
		return err
	}
	switch res.Code {
	case meta.CodeOK:
		return nil
	case meta.CodeNotFound:
		return domain.ErrUserNotFound
	case meta.CodeProtected:
		return forbid(access.MsgRootDelete)
	}
	return unexpected("delete", name, res)
}
