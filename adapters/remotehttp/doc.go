// Package remotehttp is the outbound HTTPS transport to remotes, the other
// Narad clusters this one ships records to (internals.md §7.7). It owns the
// remote URL rule and its canonical form, the address guard (allowed ports,
// allowed hosts, and no loopback, link-local, multicast, broadcast or cloud
// metadata destination in any spelling), checked when a remote is created
// and again on every dial, and one connection pool per remote.
//
// It must never follow a redirect (a 3xx is an answer), never use a proxy
// (HTTP_PROXY and HTTPS_PROXY are ignored), never speak anything but
// HTTP/1.1 over verified TLS, and never put the Authorization header, a
// password or a request body in an error message or a log line.
package remotehttp
