package users

import (
	"context"
	"errors"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/access"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// SetGrants replaces name's whole grant set (an empty set removes every
// grant) and answers the account as this node's replica now holds it. The
// entry (type 22) never touches the password hash. Errors, in the route
// table's order: ErrForbidden (admin), ErrInvalidArgument (grants),
// ErrForbidden (own grants, conferring admin without being root),
// ErrUserNotFound, ErrForbidden (root's grants), ErrUnavailable.
func (s *Service) SetGrants(ctx context.Context, p access.Principal, name string, grants []meta.Grant) (meta.User, error) {
	u, err := s.setGrants(ctx, p, name, grants)
	s.record(ports.AuditUserGrants, p, name, "", err)
	return u, err
}

func (s *Service) setGrants(ctx context.Context, p access.Principal, name string, grants []meta.Grant) (meta.User, error) {
	if err := adminOnly(p); err != nil {
		return meta.User{}, err
	}
	if err := access.ValidGrants(grants); err != nil {
		return meta.User{}, err
	}
	if err := access.CheckGrantsEdit(p, name, grants); err != nil {
		return meta.User{}, err
	}
	target, err := s.readUser(name)
	if err != nil {
		return meta.User{}, err
	}
	if err := access.CheckGrantsTarget(target); err != nil {
		return meta.User{}, err
	}
	res, err := s.propose(ctx, p, &meta.SetUserGrants{Username: name, Grants: cloneGrants(grants)})
	if err != nil {
		return meta.User{}, err
	}
	switch res.Code {
	case meta.CodeOK:
	case meta.CodeNotFound:
		return meta.User{}, domain.ErrUserNotFound
	case meta.CodeProtected:
		return meta.User{}, forbid(access.MsgRootGrants)
	default:
		return meta.User{}, unexpected("set grants of", name, res)
	}
	u, err := s.readUser(name)
	if err != nil {
		return meta.User{}, err
	}
	return public(u), nil
}

// PasswordChange is a password change as the client sent it: New is
// new_password, Current is current_password (needed only when a non-admin
// changes their own), Remote the client's address for the throttle and the
// audit line.
type PasswordChange struct {
	New, Current string
	Remote       string
}

// SetPassword replaces name's password hash (entry type 21, which never
// touches grants). Errors, in the route table's order: ErrForbidden
// ("admin required": neither self nor admin), ErrInvalidArgument
// (new_password), ErrUserNotFound, ErrForbidden (root's password by another,
// "current password is incorrect"), domain.ErrAuthThrottled and the
// checker's other errors, ErrUnavailable.
func (s *Service) SetPassword(ctx context.Context, p access.Principal, name string, req PasswordChange) error {
	err := s.setPassword(ctx, p, name, req)
	s.record(ports.AuditUserPassword, p, name, req.Remote, err)
	return err
}

func (s *Service) setPassword(ctx context.Context, p access.Principal, name string, req PasswordChange) error {
	needCurrent, err := access.PasswordChange(p, name)
	if err != nil {
		return err
	}
	if err := access.ValidPassword("new_password", req.New); err != nil {
		return err
	}
	target, err := s.readUser(name)
	if err != nil {
		return err
	}
	if err := access.CheckPasswordTarget(p, target); err != nil {
		return err
	}
	if needCurrent {
		if err := s.checkCurrent(ctx, name, req); err != nil {
			return err
		}
	}
	hash, err := s.hash(ctx, req.New)
	if err != nil {
		return err
	}
	res, err := s.propose(ctx, p, &meta.SetUserPassword{Username: name, PasswordHash: hash})
	if err != nil {
		return err
	}
	switch res.Code {
	case meta.CodeOK:
		return nil
	case meta.CodeNotFound:
		return domain.ErrUserNotFound
	}
	return unexpected("set password of", name, res)
}

// checkCurrent proves a self-service caller knows the current password,
// through the authenticator so every wrong guess costs a throttle token. A
// missing or over-long current password cannot be right and is refused
// without a check.
func (s *Service) checkCurrent(ctx context.Context, name string, req PasswordChange) error {
	if req.Current == "" || len(req.Current) > access.PasswordMaxBytes {
		return forbid(access.MsgCurrentIncorrect)
	}
	_, err := s.creds.Authenticate(ctx, name, []byte(req.Current), req.Remote)
	if errors.Is(err, domain.ErrUnauthenticated) {
		return forbid(access.MsgCurrentIncorrect)
	}
	return err
}
