package openapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	verrors "github.com/pb33f/libopenapi-validator/errors"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"
	"github.com/pb33f/libopenapi/orderedmap"
)

// docPath is the OpenAPI description under test.
const docPath = repoRoot + "/docs/openapi.yaml"

// spec is the loaded document with its validator.
type spec struct {
	model *v3.Document
	v     validator.Validator
	ops   map[string]*v3.Operation // "METHOD /template"
}

// loadSpec parses docs/openapi.yaml, builds the validator and fails unless
// the document itself validates against the OpenAPI 3.1 schema.
func loadSpec(t *testing.T) *spec {
	t.Helper()
	raw, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := libopenapi.NewDocument(raw)
	if err != nil {
		t.Fatalf("parse %s: %v", docPath, err)
	}
	m, err := doc.BuildV3Model()
	if err != nil {
		t.Fatalf("build the model of %s: %v", docPath, err)
	}
	if got := m.Model.Version; got != "3.1.0" {
		t.Fatalf("openapi: %s, want 3.1.0", got)
	}
	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		t.Fatalf("build the validator: %v", errs)
	}
	if ok, verrs := v.ValidateDocument(); !ok {
		t.Fatalf("%s is not a valid OpenAPI document:\n%s", docPath, describe(verrs))
	}
	s := &spec{model: &m.Model, v: v, ops: map[string]*v3.Operation{}}
	for path, item := range m.Model.Paths.PathItems.FromOldest() {
		for method, op := range item.GetOperations().FromOldest() {
			s.ops[strings.ToUpper(method)+" "+path] = op
		}
	}
	return s
}

// operations lists the documented "METHOD /template" keys, sorted.
func (s *spec) operations() []string {
	out := make([]string, 0, len(s.ops))
	for k := range s.ops {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// operationOf names the documented operation a request lands on: the
// template whose segments match the path, literal segments winning over
// parameters. "" when none does.
func (s *spec) operationOf(method, path string) string {
	best, bestLiterals := "", -1
	segs := strings.Split(path, "/")
	for key := range s.ops {
		m, tmpl, _ := strings.Cut(key, " ")
		ts := strings.Split(tmpl, "/")
		if m != method || len(ts) != len(segs) {
			continue
		}
		literals, ok := 0, true
		for i, seg := range ts {
			switch {
			case strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}"):
				ok = ok && segs[i] != ""
			case seg == segs[i]:
				literals++
			default:
				ok = false
			}
		}
		if ok && literals > bestLiterals {
			best, bestLiterals = key, literals
		}
	}
	return best
}

// client drives the node; every exchange is checked against the spec and
// counted per documented operation and status.
type client struct {
	url  string
	spec *spec
	mu   sync.Mutex
	hits map[string]map[int]int
}

// cred is a user's Basic credentials.
type cred struct{ user, pass string }

var root = &cred{rootUser, rootPassword}

// call is one request. badRequest marks a request that breaks the document
// on purpose (an unknown field, no credentials, ...): the validator must
// refuse it, and the answer must still be a documented one.
type call struct {
	method, path string // path may carry a query
	as           *cred  // nil: no Authorization header
	body         []byte
	contentType  string
	header       map[string]string
	badRequest   bool
}

// answer is what the node said.
type answer struct {
	status int
	header http.Header
	body   []byte
}

func (c call) request(base string) *http.Request {
	req, err := http.NewRequest(c.method, base+c.path, bytes.NewReader(c.body))
	if err != nil {
		panic(err)
	}
	if c.as != nil {
		req.SetBasicAuth(c.as.user, c.as.pass)
	}
	if c.contentType != "" {
		req.Header.Set("Content-Type", c.contentType)
	}
	for k, v := range c.header {
		req.Header.Set(k, v)
	}
	return req
}

// do sends c, fails unless the node answers want, and validates the request
// and the answer against the document.
func (cl *client) do(t *testing.T, c call, want int) answer {
	t.Helper()
	return cl.doAny(t, c, want)
}

// doAny is do for an answer that may be any of want.
func (cl *client) doAny(t *testing.T, c call, want ...int) answer {
	t.Helper()
	what := c.method + " " + c.path
	ok, errs := cl.spec.v.ValidateHttpRequest(c.request(cl.url))
	switch {
	case c.badRequest && ok:
		t.Errorf("%s: the document accepts a request that breaks it on purpose", what)
	case !c.badRequest && !ok:
		t.Errorf("%s: request does not match the document:\n%s", what, describe(errs))
	}
	resp, err := http.DefaultClient.Do(c.request(cl.url))
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("%s: read the answer: %v", what, err)
	}
	a := answer{status: resp.StatusCode, header: resp.Header, body: body}
	if !slices.Contains(want, a.status) {
		t.Fatalf("%s: answered %d %s, want %v", what, a.status, body, want)
	}
	cl.checkAnswer(t, c, a)
	return a
}

// checkAnswer validates a against the operation c landed on and records it.
func (cl *client) checkAnswer(t *testing.T, c call, a answer) {
	t.Helper()
	what := fmt.Sprintf("%s %s → %d", c.method, c.path, a.status)
	req := c.request(cl.url)
	key := cl.spec.operationOf(req.Method, req.URL.Path)
	if key == "" {
		t.Fatalf("%s: no documented operation", what)
	}
	resp := &http.Response{StatusCode: a.status, Header: a.header, Body: io.NopCloser(bytes.NewReader(a.body)), Request: req}
	if ok, errs := cl.spec.v.ValidateHttpResponse(req, resp); !ok {
		t.Errorf("%s: answer does not match the document:\n%s\nbody: %s", what, describe(errs), a.body)
	}
	if r := cl.spec.ops[key].Responses.Codes.GetOrZero(fmt.Sprint(a.status)); r != nil && orderedmap.Len(r.Content) == 0 && len(a.body) > 0 {
		t.Errorf("%s: documented without a body, answered %q", what, a.body)
	}
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if cl.hits[key] == nil {
		cl.hits[key] = map[int]int{}
	}
	cl.hits[key][a.status]++
}

// decode unmarshals a JSON answer.
func (a answer) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(a.body, v); err != nil {
		t.Fatalf("decode %s: %v", a.body, err)
	}
}

// errorText is the error body's message.
func (a answer) errorText() string {
	var e struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(a.body, &e) != nil {
		return strings.TrimSpace(string(a.body))
	}
	return e.Error
}

// wantError fails unless the answer's error message contains sub.
func (a answer) wantError(t *testing.T, sub string) {
	t.Helper()
	if !strings.Contains(a.errorText(), sub) {
		t.Errorf("error %q does not contain %q", a.errorText(), sub)
	}
}

func describe(errs []*verrors.ValidationError) string {
	var b strings.Builder
	for _, e := range errs {
		fmt.Fprintf(&b, "  - %s: %s\n", e.Message, e.Reason)
		for _, se := range e.SchemaValidationErrors {
			fmt.Fprintf(&b, "      %s at %s (%s)\n", se.Reason, se.FieldPath, se.KeywordLocation)
		}
	}
	return b.String()
}

// jsonBody marshals v for a request.
func jsonBody(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
