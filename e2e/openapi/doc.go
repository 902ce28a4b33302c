// Package openapi checks docs/openapi.yaml against a real Narad node: every
// request the test sends and every answer the node gives must validate
// against the document, every documented operation must be exercised, and
// every route the server registers must be documented. It is a module of its
// own so that the validator never enters the server's go.mod.
package openapi
