// Package jsonschema implements ports.SchemaValidator with
// github.com/santhosh-tekuri/jsonschema/v6 (api.md §2.8.1): it checks schema
// documents against the registration rules and validates produce payloads,
// caching compiled schemas by key and bounding concurrent validations.
//
// It must never load anything from outside the document: every reference
// that leaves it is refused, and only the built-in drafts' metaschemas load.
// It holds no topic state and decides no business rule beyond the schema
// rules of the API.
package jsonschema
