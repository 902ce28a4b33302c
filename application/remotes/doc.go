// Package remotes runs the remotes use cases (api.md §2.18, internals.md
// §7.1, §7.6): register, change, delete, list and test the other clusters
// this one ships to, and re-seal their passwords after a rotation of the
// cluster secret. It also keeps this node's credential cache: one ready
// client per remote and credential version, so the send path does no
// cryptography.
//
// A password lives here only between the request and its seal (or, opened,
// inside the cache's Authorization header); it is never logged, returned
// or put in an error.
package remotes
