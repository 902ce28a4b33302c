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
	// Observer receives validation times and refusals; nil observes nothing.
	Observer Observer
}

// Validator checks schemas and validates payloads. Safe for concurrent use.
type Validator struct {
	slots    chan struct{}
	slotWait time.Duration
	obs      Observer

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
	if opts.Observer == nil {
		opts.Observer = nopObserver{}
	}
	return &Validator{slots: make(chan struct{}, opts.Slots), slotWait: opts.SlotWait, obs: opts.Observer, cache: map[string]cached{}}
}

// rejection is a refusal with the reason the observer counts it under.
type rejection struct {
	reason string
	err    error
}

func refuse(reason, format string, args ...any) *rejection {
	return &rejection{reason: reason, err: domain.Refuse(domain.ErrInvalidArgument, cut(msgPrefix+fmt.Sprintf(format, args...)))}
}

// reject reports r to the observer and returns its error (nil for nil).
func (v *Validator) reject(r *rejection) error {
	if r == nil {
		return nil
	}
	v.obs.Rejected(r.reason)
	return r.err
}

// Check reports whether doc registers as a schema (api.md §2.8.1): a JSON
// object or true, at most 256 KiB and 64 levels, references only inside the
// document, compiling under its draft.
func (v *Validator) Check(doc []byte) error {
	_, r := compile(doc)
	return v.reject(r)
}

// compile applies the registration rules and compiles doc.
func compile(doc []byte) (*js.Schema, *rejection) {
	switch {
	case len(doc) > SchemaDocMaxBytes:
		return nil, refuse(ReasonInvalid, "document of %d bytes is over the limit of %d bytes", len(doc), SchemaDocMaxBytes)
	case nestingExceeds(doc, SchemaNestingMaxLevels):
		return nil, refuse(ReasonDepth, "document nests deeper than %d levels", SchemaNestingMaxLevels)
	}
	parsed, err := js.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return nil, refuse(ReasonMalformed, "not valid JSON: %v", err)
	}
	if _, isObject := parsed.(map[string]any); !isObject && parsed != true {
		return nil, refuse(ReasonInvalid, "must be a JSON object or true")
	}
	if ref, ok := outsideRef(parsed); ok {
		return nil, refuse(ReasonInvalid, "reference %q leaves the document; only references inside it (#...) are allowed", ref)
	}
	c := js.NewCompiler()
	c.DefaultDraft(js.Draft2020)
	c.AssertFormat()
	c.UseLoader(refusingLoader{})
	if err := c.AddResource(baseURL, parsed); err != nil {
		return nil, refuse(ReasonInvalid, "%s", flatten(err))
	}
	sch, err := c.Compile(baseURL)
	if err != nil {
		return nil, refuse(ReasonInvalid, "%s", flatten(err))
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
	value, r := decodePayload(payload)
	if r != nil {
		return v.reject(r)
	}
	sch, err := v.schema(key, doc)
	if err != nil {
		return err
	}
	release, r := v.acquire(ctx)
	if r != nil {
		return v.reject(r)
	}
	defer release()
	start := time.Now()
	v.obs.ValidationStarted()
	err = sch.Validate(value)
	v.obs.ValidationFinished(time.Since(start))
	if err != nil {
		var verr *js.ValidationError
		if errors.As(err, &verr) {
			return v.reject(refuse(ReasonInvalid, "%s", flatten(verr)))
		}
		return fmt.Errorf("jsonschema: validate against %s: %w", key, err)
	}
	return nil
}

// decodePayload checks payload is exactly one JSON text in valid UTF-8,
// nesting at most 256 levels, numbers within exponent ±1000, and decodes it.
func decodePayload(payload []byte) (any, *rejection) {
	switch {
	case !utf8.Valid(payload):
		return nil, refuse(ReasonMalformed, "payload is not valid UTF-8")
	case bytes.HasPrefix(payload, []byte("\xef\xbb\xbf")):
		return nil, refuse(ReasonMalformed, "payload starts with a byte-order mark")
	case nestingExceeds(payload, PayloadNestingMaxLevels):
		return nil, refuse(ReasonDepth, msgTooDeep)
	}
	value, err := js.UnmarshalJSON(bytes.NewReader(payload))
	if err != nil {
		return nil, refuse(ReasonMalformed, "payload is not one JSON text: %v", err)
	}
	if n, bad := exponentTooLarge(value); bad {
		return nil, refuse(ReasonMalformed, "number %s has an exponent beyond ±%d", n, NumberExponentMax)
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
	sch, r := compile(doc)
	if r != nil {
		return nil, fmt.Errorf("jsonschema: stored schema %s does not compile: %w", key, v.reject(r))
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
func (v *Validator) acquire(ctx context.Context) (release func(), r *rejection) {
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
		return nil, &rejection{reason: ReasonBusy, err: domain.Refuse(domain.ErrUnavailable, fmt.Sprintf(msgSlotBusy, v.slotWait))}
	case <-ctx.Done():
		return nil, &rejection{reason: ReasonCanceled, err: domain.Refuse(domain.ErrUnavailable, fmt.Sprintf(msgSlotCtxEnd, ctx.Err()))}
	}
}
