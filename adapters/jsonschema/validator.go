package jsonschema

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"runtime"
	"sync"
	"time"
	"unicode/utf8"

	js "github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

var _ ports.SchemaValidator = (*Validator)(nil)

// Options tune a Validator; zero values take the defaults.
type Options struct {
	// Slots is how many validations run at once (0 = GOMAXPROCS).
	Slots int
	// SlotWait bounds the wait for a free slot (0 = 5 s).
	SlotWait time.Duration
}

// Validator checks schemas and validates payloads. Safe for concurrent use.
type Validator struct {
	slots    chan struct{}
	slotWait time.Duration

	mu    sync.Mutex
	cache map[string]cached
}

type cached struct {
	sum    uint64 // the document's hash: a key reused for another document recompiles
	schema *js.Schema
}

// New returns a Validator.
func New(opts Options) *Validator {
	if opts.Slots <= 0 {
		opts.Slots = runtime.GOMAXPROCS(0)
	}
	if opts.SlotWait <= 0 {
		opts.SlotWait = SlotWaitDefault
	}
	return &Validator{slots: make(chan struct{}, opts.Slots), slotWait: opts.SlotWait, cache: map[string]cached{}}
}

func refuse(format string, args ...any) error {
	return domain.Refuse(domain.ErrInvalidArgument, cut(msgPrefix+fmt.Sprintf(format, args...)))
}

// Check reports whether doc registers as a schema (api.md §2.8.1): a JSON
// object or true, at most 256 KiB and 64 levels, references only inside the
// document, compiling under its draft.
func (v *Validator) Check(doc []byte) error {
	_, err := compile(doc)
	return err
}

// compile applies the registration rules and compiles doc.
func compile(doc []byte) (*js.Schema, error) {
	switch {
	case len(doc) > SchemaDocMaxBytes:
		return nil, refuse("document of %d bytes is over the limit of %d bytes", len(doc), SchemaDocMaxBytes)
	case nestingExceeds(doc, SchemaNestingMaxLevels):
		return nil, refuse("document nests deeper than %d levels", SchemaNestingMaxLevels)
	}
	parsed, err := js.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return nil, refuse("not valid JSON: %v", err)
	}
	if _, isObject := parsed.(map[string]any); !isObject && parsed != true {
		return nil, refuse("must be a JSON object or true")
	}
	if ref, ok := outsideRef(parsed); ok {
		return nil, refuse("reference %q leaves the document; only references inside it (#...) are allowed", ref)
	}
	c := js.NewCompiler()
	c.DefaultDraft(js.Draft2020)
	c.AssertFormat()
	c.UseLoader(refusingLoader{})
	if err := c.AddResource(baseURL, parsed); err != nil {
		return nil, refuse("%s", flatten(err))
	}
	sch, err := c.Compile(baseURL)
	if err != nil {
		return nil, refuse("%s", flatten(err))
	}
	return sch, nil
}

// refusingLoader loads nothing: only the built-in metaschemas (served before
// any loader is asked) and the document itself are ever read.
type refusingLoader struct{}

func (refusingLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("%s is outside the document and is never loaded", url)
}

// Validate validates payload against doc, compiled once per key. Every
// validation takes one of the slots: the spec bounds large payloads and
// costly schemas, and this adapter does not measure cost, so it bounds all.
func (v *Validator) Validate(ctx context.Context, key string, doc, payload []byte) error {
	value, err := decodePayload(payload)
	if err != nil {
		return err
	}
	sch, err := v.schema(key, doc)
	if err != nil {
		return err
	}
	release, err := v.acquire(ctx)
	if err != nil {
		return err
	}
	defer release()
	if err := sch.Validate(value); err != nil {
		var verr *js.ValidationError
		if errors.As(err, &verr) {
			return refuse("%s", flatten(verr))
		}
		return fmt.Errorf("jsonschema: validate against %s: %w", key, err)
	}
	return nil
}

// decodePayload checks payload is exactly one JSON text in valid UTF-8,
// nesting at most 256 levels, numbers within exponent ±1000, and decodes it.
func decodePayload(payload []byte) (any, error) {
	switch {
	case !utf8.Valid(payload):
		return nil, refuse("payload is not valid UTF-8")
	case bytes.HasPrefix(payload, []byte("\xef\xbb\xbf")):
		return nil, refuse("payload starts with a byte-order mark")
	case nestingExceeds(payload, PayloadNestingMaxLevels):
		return nil, refuse(msgTooDeep)
	}
	value, err := js.UnmarshalJSON(bytes.NewReader(payload))
	if err != nil {
		return nil, refuse("payload is not one JSON text: %v", err)
	}
	if n, bad := exponentTooLarge(value); bad {
		return nil, refuse("number %s has an exponent beyond ±%d", n, NumberExponentMax)
	}
	return value, nil
}

// schema returns the compiled doc for key, compiling on a miss.
func (v *Validator) schema(key string, doc []byte) (*js.Schema, error) {
	h := fnv.New64a()
	h.Write(doc)
	sum := h.Sum64()
	v.mu.Lock()
	c, ok := v.cache[key]
	v.mu.Unlock()
	if ok && c.sum == sum {
		return c.schema, nil
	}
	sch, err := compile(doc)
	if err != nil {
		return nil, fmt.Errorf("jsonschema: stored schema %s does not compile: %w", key, err)
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.cache) >= CacheMaxEntries {
		for k := range v.cache { // drop one arbitrary entry
			delete(v.cache, k)
			break
		}
	}
	v.cache[key] = cached{sum: sum, schema: sch}
	return sch, nil
}

// acquire takes a validation slot within the wait bound and ctx.
func (v *Validator) acquire(ctx context.Context) (release func(), err error) {
	select {
	case v.slots <- struct{}{}:
		return func() { <-v.slots }, nil
	default:
	}
	t := time.NewTimer(v.slotWait)
	defer t.Stop()
	select {
	case v.slots <- struct{}{}:
		return func() { <-v.slots }, nil
	case <-t.C:
		return nil, domain.Refuse(domain.ErrUnavailable, fmt.Sprintf(msgSlotBusy, v.slotWait))
	case <-ctx.Done():
		return nil, domain.Refuse(domain.ErrUnavailable, fmt.Sprintf(msgSlotCtxEnd, ctx.Err()))
	}
}
