package ports

import "context"

// SchemaValidator checks JSON Schema documents and validates payloads
// against them (api.md §2.8.1). Safe for concurrent use; it may cache
// compiled schemas by key.
type SchemaValidator interface {
	// Check reports whether doc is a schema the broker accepts; a refusal is
	// a domain.Refusal of domain.ErrInvalidArgument whose message starts
	// "invalid argument: schema: ".
	Check(doc []byte) error
	// Validate validates payload against doc, compiled once per key (for
	// example "<topic id>/<version>"). A payload that is not one JSON text,
	// nests deeper than 256 levels or fails the schema is a domain.Refusal
	// of domain.ErrInvalidArgument with the API's message; a validation slot
	// not free within the bound is domain.ErrUnavailable. ctx bounds the wait.
	Validate(ctx context.Context, key string, doc, payload []byte) error
}
