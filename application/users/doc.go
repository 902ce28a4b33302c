// Package users owns account administration (api.md §2.16, §4.2, §4.5;
// internals.md §12.2): create, list, get and delete accounts, replace an
// account's grants, change a password, and seed the root account `admin`
// once per cluster.
//
// Authorization and the no-escalation invariants are the pure rules of
// domain/access, applied here in the order the route table lists its
// errors, before any write; the state machine re-checks what it can (root
// protected). Writes are field-scoped metadata entries proposed through
// ports.MetadataStore; reads come from the local replica. Passwords are
// hashed through ports.PasswordHasher under a bound of their own, and a
// password or hash never leaves this package in an answer, an error or an
// audit line.
//
// It must never open a file or a socket, import an adapter, or stamp a time
// that does not come from ports.Clock; the generated root password reaches
// disk only through the caller's SeedSource.Store.
package users
