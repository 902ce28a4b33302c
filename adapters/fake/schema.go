package fake

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

var _ ports.SchemaValidator = (*SchemaValidator)(nil)

// SchemaValidator is a ports.SchemaValidator for use-case tests. Check
// accepts a JSON object or true; Validate accepts one JSON text. A schema
// whose document holds RefuseMarker is refused by Check, and a payload
// holding it is refused by Validate, so tests can trigger both refusals.
// Safe for concurrent use.
type SchemaValidator struct {
	mu        sync.Mutex
	checks    int
	validates int
	busy      error
}

// RefuseMarker is the text that makes the fake refuse a schema or payload.
const RefuseMarker = `"fake-refuse"`

// NewSchemaValidator returns a validator that accepts every well-formed
// schema and payload.
func NewSchemaValidator() *SchemaValidator { return &SchemaValidator{} }

// Check accepts a JSON object or the literal true without RefuseMarker.
func (v *SchemaValidator) Check(doc []byte) error {
	v.mu.Lock()
	v.checks++
	v.mu.Unlock()
	trimmed := bytes.TrimSpace(doc)
	switch {
	case !json.Valid(trimmed):
		return domain.Refuse(domain.ErrInvalidArgument, "invalid argument: schema: not valid JSON")
	case !bytes.Equal(trimmed, []byte("true")) && (len(trimmed) == 0 || trimmed[0] != '{'):
		return domain.Refuse(domain.ErrInvalidArgument, "invalid argument: schema: must be a JSON object or true")
	case bytes.Contains(doc, []byte(RefuseMarker)):
		return domain.Refuse(domain.ErrInvalidArgument, "invalid argument: schema: refused by the fake")
	}
	return nil
}

// Validate accepts one JSON text without RefuseMarker, unless SetBusy armed
// a busy answer.
func (v *SchemaValidator) Validate(ctx context.Context, _ string, _, payload []byte) error {
	v.mu.Lock()
	v.validates++
	busy := v.busy
	v.mu.Unlock()
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case busy != nil:
		return busy
	case !json.Valid(payload):
		return domain.Refuse(domain.ErrInvalidArgument, "invalid argument: schema: payload is not one JSON text")
	case bytes.Contains(payload, []byte(RefuseMarker)):
		return domain.Refuse(domain.ErrInvalidArgument, "invalid argument: schema: payload refused by the fake")
	}
	return nil
}

// SetBusy makes every Validate return err (nil restores normal answers).
func (v *SchemaValidator) SetBusy(err error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.busy = err
}

// Checks counts Check calls so far.
func (v *SchemaValidator) Checks() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.checks
}

// Validates counts Validate calls so far.
func (v *SchemaValidator) Validates() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.validates
}
