package jsonschema_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/narad/narad/adapters/jsonschema"
	"github.com/narad/narad/domain"
)

func nested(levels int) string {
	return strings.Repeat("[", levels) + strings.Repeat("]", levels)
}

// wantInvalid checks err is a schema refusal whose message contains part.
func wantInvalid(t *testing.T, err error, part string) {
	t.Helper()
	var r *domain.Refusal
	if !errors.Is(err, domain.ErrInvalidArgument) || !errors.As(err, &r) {
		t.Fatalf("got %v, want an invalid-argument refusal", err)
	}
	if !strings.HasPrefix(r.Detail, "invalid argument: schema: ") || !strings.Contains(r.Detail, part) {
		t.Fatalf("message %q, want the schema prefix and %q", r.Detail, part)
	}
}

// Ensure that registration accepts objects and true and refuses every other
// document, external references, bad regexes, unknown drafts, oversize and
// overdeep documents (api.md §2.8.1; conformance 29, 58, 183, 184).
func TestCheck(t *testing.T) {
	t.Parallel()
	v := jsonschema.New(jsonschema.Options{})
	accepted := []string{
		`true`, `{}`, `{"type":"object","required":["id"],"properties":{"id":{"type":"integer"}}}`,
		`{"$schema":"http://json-schema.org/draft-04/schema#","type":"string"}`,
		`{"$schema":"http://json-schema.org/draft-07/schema#","type":"string"}`,
		`{"$defs":{"a":{"type":"integer"}},"$ref":"#/$defs/a"}`,
		`{"$id":"https://example.com/s.json","$defs":{"a":{}},"properties":{"x":{"$ref":"#/$defs/a"}}}`,
		`{"const":{"$ref":"https://example.com/data-not-a-ref"}}`,
		"{" + strings.Repeat(`"a":{`, 62) + strings.Repeat("}", 62) + "}",
	}
	for _, doc := range accepted {
		if err := v.Check([]byte(doc)); err != nil {
			t.Errorf("%.60s: %v", doc, err)
		}
	}
	refused := map[string]string{
		`false`:                                 "must be a JSON object or true",
		`"text"`:                                "must be a JSON object or true",
		`[1]`:                                   "must be a JSON object or true",
		`null`:                                  "must be a JSON object or true",
		`{"type":123}`:                          "type",
		`{"$ref":"https://example.com/x.json"}`: "leaves the document",
		`{"properties":{"a":{"$ref":"other.json#/x"}}}`: "leaves the document",
		`{"$schema":"https://example.com/custom"}`:      "never loaded",
		`{"pattern":"(?=a)"}`:                           "regex",
		`{"$ref":"#/$defs/missing"}`:                    "not found",
		`{"a":`:                                         "not valid JSON",
		"{" + strings.Repeat(`"a":{`, 64) + strings.Repeat("}", 64) + "}": "deeper than 64 levels",
		`{"description":"` + strings.Repeat("x", 256<<10) + `"}`:          "over the limit",
	}
	for doc, part := range refused {
		t.Run(doc[:min(len(doc), 30)], func(t *testing.T) { wantInvalid(t, v.Check([]byte(doc)), part) })
	}
}

// Ensure that payloads are validated against the schema, as one JSON text
// in UTF-8, nesting at most 256 levels, numbers exact and bounded
// (conformance 28, 185, 186; api.md §2.8.1).
func TestValidatePayload(t *testing.T) {
	t.Parallel()
	v := jsonschema.New(jsonschema.Options{})
	ctx := context.Background()
	doc := []byte(`{"type":"object","properties":{"id":{"type":"integer"},"s":{"maxLength":2},"d":{"format":"date"}},"required":["id"]}`)
	for _, p := range []string{`{"id":42}`, `{"id":42.0}`, `{"id":1,"s":"éé"}`, `{"id":1,"d":"2026-10-01"}`} {
		if err := v.Validate(ctx, "t/1", doc, []byte(p)); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	refused := map[string]string{
		`{"id":"not-an-integer"}`:    "want integer",
		`{"id":1} {"id":2}`:          "not one JSON text",
		`{"id":1,"s":"abc"}`:         "maxLength",
		`{"id":1,"d":"yesterday"}`:   "date",
		`{"id":1e2000}`:              "exponent",
		"\xef\xbb\xbf{\"id\":1}":     "byte-order mark",
		"{\"id\":1,\"s\":\"\xff\"}":  "UTF-8",
		"{\"id\":1,\"s\":\"a\x01\"}": "not one JSON text",
		``:                           "not one JSON text",
	}
	for p, part := range refused {
		t.Run(p, func(t *testing.T) { wantInvalid(t, v.Validate(ctx, "t/1", doc, []byte(p)), part) })
	}
	anything := []byte(`true`)
	if err := v.Validate(ctx, "any/1", anything, []byte(nested(256))); err != nil {
		t.Fatalf("256 levels: %v", err)
	}
	wantInvalid(t, v.Validate(ctx, "any/1", anything, []byte(nested(257))), "payload nests deeper than 256 levels")
}

// Ensure that a key reused for another document recompiles instead of
// validating against the stale schema.
func TestValidateCacheFollowsDocument(t *testing.T) {
	t.Parallel()
	v := jsonschema.New(jsonschema.Options{})
	ctx := context.Background()
	if err := v.Validate(ctx, "k", []byte(`{"type":"string"}`), []byte(`"a"`)); err != nil {
		t.Fatal(err)
	}
	wantInvalid(t, v.Validate(ctx, "k", []byte(`{"type":"integer"}`), []byte(`"a"`)), "want integer")
	if err := v.Validate(ctx, "k", []byte(`{"type":"invalid"}`), []byte(`1`)); err == nil {
		t.Fatal("a stored schema that does not compile validated")
	}
}

// Ensure that with every slot taken a validation waits at most the bound,
// then answers 503 with the text the SDK matches ("schema validation slot"),
// and that an ended request answers at once (api.md §2.8.1, B.2).
func TestValidationSlots(t *testing.T) {
	t.Parallel()
	v := jsonschema.New(jsonschema.Options{Slots: 1, SlotWait: 50 * time.Millisecond})
	release := v.HoldSlotForTest()
	ctx := context.Background()
	err := v.Validate(ctx, "k", []byte(`true`), []byte(`1`))
	if !errors.Is(err, domain.ErrUnavailable) || !strings.Contains(err.Error(), "schema validation slot") {
		t.Fatalf("busy: %v", err)
	}
	ended, cancel := context.WithCancel(ctx)
	cancel()
	err = v.Validate(ended, "k", []byte(`true`), []byte(`1`))
	if !errors.Is(err, domain.ErrUnavailable) || !strings.Contains(err.Error(), "waiting for a schema validation slot") {
		t.Fatalf("ended request: %v", err)
	}
	release()
	v = jsonschema.New(jsonschema.Options{Slots: 1}) // the default 5 s wait: no flake under load
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := v.Validate(ctx, "k", []byte(`{"type":"integer"}`), []byte(`7`)); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
}
