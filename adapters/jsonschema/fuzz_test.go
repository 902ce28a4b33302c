package jsonschema_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"unicode/utf8"

	"github.com/narad/narad/adapters/jsonschema"
	"github.com/narad/narad/domain"
)

// FuzzValidatePayload ensures that no payload panics the validator, that
// every refusal is a client refusal (never an internal error), and that a
// payload accepted under the permissive schema is valid UTF-8 JSON.
func FuzzValidatePayload(f *testing.F) {
	f.Add([]byte(`{"id":42}`))
	v := jsonschema.New(jsonschema.Options{})
	strict := []byte(`{"type":"object","properties":{"id":{"type":"integer","minimum":0}},"additionalProperties":{"type":"string","maxLength":4}}`)
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, payload []byte) {
		for _, doc := range [][]byte{[]byte(`true`), strict} {
			err := v.Validate(ctx, string(doc), doc, payload)
			if err == nil {
				if !utf8.Valid(payload) || !json.Valid(payload) {
					t.Fatalf("accepted %q", payload)
				}
				continue
			}
			var r *domain.Refusal
			if !errors.Is(err, domain.ErrInvalidArgument) || !errors.As(err, &r) || len(r.Detail) > jsonschema.MessageMaxBytes {
				t.Fatalf("payload %q: %v", payload, err)
			}
		}
	})
}
