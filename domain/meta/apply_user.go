package meta

import "reflect"

func (t *tx) user(name string) (User, bool, error) { return ReadUser(t, name) }

func (e *CreateUser) apply(t *tx, env Envelope) (Result, error) {
	if _, found, err := t.user(e.Username); err != nil || found {
		return refuse(CodeExists, "user %q exists", e.Username), err
	}
	t.put(userKey(e.Username), User{Username: e.Username, PasswordHash: e.PasswordHash, Grants: e.Grants,
		CreatedAtMs: env.AtMs, UpdatedAtMs: env.AtMs})
	return okResult(), nil
}

func (e *UpdateUser) apply(t *tx, env Envelope) (Result, error) {
	return t.updateUser(e.Username, env.AtMs, func(u *User) Result {
		if u.Root && !reflect.DeepEqual(u.Grants, e.Grants) {
			return refuse(CodeProtected, "the root admin's grants are immutable")
		}
		u.PasswordHash, u.Grants = e.PasswordHash, e.Grants
		return okResult()
	})
}

func (e *SetUserPassword) apply(t *tx, env Envelope) (Result, error) {
	return t.updateUser(e.Username, env.AtMs, func(u *User) Result {
		u.PasswordHash = e.PasswordHash
		return okResult()
	})
}

func (e *SetUserGrants) apply(t *tx, env Envelope) (Result, error) {
	return t.updateUser(e.Username, env.AtMs, func(u *User) Result {
		if u.Root {
			return refuse(CodeProtected, "the root admin's grants are immutable")
		}
		u.Grants = e.Grants
		return okResult()
	})
}

// updateUser applies change to an existing account and stamps UpdatedAtMs.
func (t *tx) updateUser(name string, atMs int64, change func(*User) Result) (Result, error) {
	u, found, err := t.user(name)
	if err != nil || !found {
		return refuse(CodeNotFound, "user %q not found", name), err
	}
	if res := change(&u); !res.OK() {
		return res, nil
	}
	u.UpdatedAtMs = atMs
	t.put(userKey(name), u)
	return okResult(), nil
}

func (e *SeedRootUser) apply(t *tx, env Envelope) (Result, error) {
	users, err := Users(t)
	if err != nil {
		return Result{}, err
	}
	for _, u := range users {
		if u.Root {
			return okResult(), nil
		}
		if u.Username == e.Username {
			return refuse(CodeExists, "user %q exists and is not root", e.Username), nil
		}
	}
	t.put(userKey(e.Username), User{Username: e.Username, PasswordHash: e.PasswordHash, Root: true,
		Grants: []Grant{{Action: "admin"}}, CreatedAtMs: env.AtMs, UpdatedAtMs: env.AtMs})
	return okResult(), nil
}

func (e *DeleteUser) apply(t *tx, _ Envelope) (Result, error) {
	return t.deleteUser(e.Username)
}

func (e *DeleteUserReleaseTopics) apply(t *tx, _ Envelope) (Result, error) {
	res, err := t.deleteUser(e.Username)
	if err != nil || !res.OK() {
		return res, err
	}
	topics, err := ListTopics(t, "", 0)
	if err != nil {
		return Result{}, err
	}
	for _, tp := range topics {
		if tp.Owner == e.Username {
			tp.Owner = ""
			t.putTopic(tp)
		}
	}
	return okResult(), nil
}

func (t *tx) deleteUser(name string) (Result, error) {
	u, found, err := t.user(name)
	if err != nil || !found {
		return refuse(CodeNotFound, "user %q not found", name), err
	}
	if u.Root {
		return refuse(CodeProtected, "the root admin cannot be deleted"), nil
	}
	t.del(userKey(name))
	return okResult(), nil
}
