// Package httpapi is the gin adapter of the v3 HTTP API (api.md §0-3): it
// parses requests, applies the 415 rule and the body and header limits, calls
// the use cases, and renders their outcomes. It alone maps domain errors to
// status codes, in one table (errors.go). It holds no business rule.
package httpapi
