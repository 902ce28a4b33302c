// Package httpclient is a small typed client of Narad's v3 HTTP API
// (api.md §2.4-2.15): topics, produce, consume, replay and acks. The CLI and
// the end-to-end tests use it.
//
// Every request carries X-Narad-Client and User-Agent (so it passes the 415
// rule of api.md §0.2), Accept: application/json, and HTTP Basic credentials
// when a user is set. Requests go round-robin over the configured servers.
// Any answer with status >= 400 becomes an *APIError whose message is the
// `error` field of a JSON error body, else the trimmed text (at most 8 KiB is
// read). The client never retries: whether a failure is worth repeating is
// the caller's decision (api.md §3.4). Pinned is one keep-alive connection
// to one server, read and written on the caller's goroutine, for a load
// generator's single-message produces (narad bench).
//
// It must never import application or bootstrap code: it speaks to a server
// only through the wire.
package httpclient
