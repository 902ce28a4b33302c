// Package remotekeys is the ports.RemoteKeyring of production: it seals and
// opens the passwords of remotes under keys derived from the cluster secret
// and the cluster's salt (internals.md §7.6), and it checks the secret
// strength rule.
//
// It owns all credential cryptography: HKDF-SHA-512 derivation, AES-256-GCM
// envelopes and the keyed fingerprint. It must never log, print, return or
// store key material, a secret or a password it did not get from Open: its
// errors name the rule or the check that failed and nothing else, and its
// types print as a redacted summary under every fmt verb. It keeps derived
// keys only in memory, cached per salt, and no password at all.
package remotekeys
