package meta

import (
	"bytes"
	"strconv"
)

func (e *PutRemote) apply(t *tx, env Envelope) (Result, error) {
	if _, found, err := ReadRemote(t, e.Name); err != nil || found {
		return refuse(CodeExists, "remote %q exists", e.Name), err
	}
	all, err := Remotes(t)
	if err != nil {
		return Result{}, err
	}
	if len(all) >= RemotesMaxCount {
		return refuse(CodeRefused, "the cluster holds %d remotes", RemotesMaxCount), nil
	}
	if res, err := t.settleSalt(e.Salt); err != nil || !res.OK() {
		return res, err
	}
	if res, err := t.countSeal(e.Credential.KeyVersion); err != nil || !res.OK() {
		return res, err
	}
	t.put(remoteKey(e.Name), Remote{
		Name: e.Name, ID: e.ID, URL: e.URL, Username: e.Username, CAPEM: e.CAPEM, Limits: e.Limits,
		SealedPassword: e.Credential.SealedPassword, KeyVersion: e.Credential.KeyVersion,
		Fingerprint: e.Credential.Fingerprint, CredentialVersion: 1, Revision: 1,
		CreatedAtMs: env.AtMs, CreatedBy: env.Actor, SetAtMs: env.AtMs, SetBy: env.Actor,
	})
	return okResult(), nil
}

// settleSalt stores the cluster salt on the first create. A create without a
// salt before one exists, or a second salt, lost a race of first creates.
func (t *tx) settleSalt(salt []byte) (Result, error) {
	stored, found, err := t.get([]byte(keyRemoteSalt))
	switch {
	case err != nil:
		return Result{}, err
	case !found && len(salt) == 0:
		return refuse(CodeConflict, "the first remote must carry the cluster salt"), nil
	case found && len(salt) != 0 && !bytes.Equal(stored, salt):
		return refuse(CodeConflict, "two first remote creates raced; the cluster salt is set"), nil
	case !found:
		t.set([]byte(keyRemoteSalt), salt)
	}
	return okResult(), nil
}

// countSeal charges one seal to key version v, refusing past RemoteSealsMaxPerKey.
func (t *tx) countSeal(v string) (Result, error) {
	n, err := t.counter(sealsKey(v))
	if err != nil {
		return Result{}, err
	}
	if n+1 > RemoteSealsMaxPerKey {
		return refuse(CodeRefused, "key %s has sealed %d passwords", v, RemoteSealsMaxPerKey), nil
	}
	t.set(sealsKey(v), []byte(strconv.FormatInt(n+1, 10)))
	return okResult(), nil
}

func (e *UpdateRemote) apply(t *tx, env Envelope) (Result, error) {
	r, found, err := ReadRemote(t, e.Name)
	if err != nil || !found {
		return refuse(CodeNotFound, "remote %q not found", e.Name), err
	}
	switch {
	case r.ID != e.ID:
		return refuse(CodeConflict, "remote %q was recreated", e.Name), nil
	case r.CredentialVersion != e.ExpectedCredentialVersion:
		return refuse(CodeConflict, "remote %q is at credential version %d, not %d", e.Name, r.CredentialVersion, e.ExpectedCredentialVersion), nil
	}
	if e.Credential != nil {
		if res, err := t.countSeal(e.Credential.KeyVersion); err != nil || !res.OK() {
			return res, err
		}
		r.SealedPassword, r.KeyVersion, r.Fingerprint = e.Credential.SealedPassword, e.Credential.KeyVersion, e.Credential.Fingerprint
		r.CredentialVersion++
	}
	r.URL, r.Username, r.CAPEM = pick(e.URL, r.URL), pick(e.Username, r.Username), pick(e.CAPEM, r.CAPEM)
	if e.Limits != nil {
		r.Limits = *e.Limits
	}
	if err := validRemoteIdentity(r.URL, r.Username, r.CAPEM); err != nil {
		return refuse(CodeInvalid, "%v", err), nil
	}
	r.Revision++
	r.SetAtMs, r.SetBy = env.AtMs, env.Actor
	t.put(remoteKey(e.Name), r)
	return okResult(), nil
}

func pick(v *string, keep string) string {
	if v == nil {
		return keep
	}
	return *v
}

func (e *DeleteRemote) apply(t *tx, _ Envelope) (Result, error) {
	r, found, err := ReadRemote(t, e.Name)
	if err != nil || !found {
		return refuse(CodeNotFound, "remote %q not found", e.Name), err
	}
	if r.ID != e.ID {
		return refuse(CodeConflict, "remote %q was recreated", e.Name), nil
	}
	t.del(remoteKey(e.Name))
	return okResult(), nil
}
