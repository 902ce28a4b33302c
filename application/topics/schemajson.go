package topics

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"net/url"
	"strconv"
	"strings"
)

// Keywords whose values are subschemas (JSON Schema drafts 4 to 2020-12).
// Every other keyword's value is data, never walked as a schema.
var (
	oneSubschema = set("additionalProperties", "additionalItems", "contains", "propertyNames", "not",
		"if", "then", "else", "unevaluatedItems", "unevaluatedProperties", "contentSchema", "items")
	mapOfSubschemas  = set("properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies")
	listOfSubschemas = set("allOf", "anyOf", "oneOf", "prefixItems")
	// schemaBookkeeping are keywords that validate nothing by themselves.
	schemaBookkeeping = set("$defs", "definitions", "$id", "id", "$schema", "$anchor", "$dynamicAnchor", "$vocabulary")
)

func set(keys ...string) map[string]bool {
	m := make(map[string]bool, len(keys))
	for _, k := range keys {
		m[k] = true
	}
	return m
}

// decodeJSON decodes one JSON value keeping numbers exact.
func decodeJSON(doc []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// stripAnnotations returns schema v without annotation keywords, at every
// subschema position (a property named "title" is kept).
func stripAnnotations(v any) any {
	obj, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := make(map[string]any, len(obj))
	for k, val := range obj {
		switch {
		case schemaAnnotations[k]:
			continue
		case oneSubschema[k]:
			out[k] = stripEach(val)
		case mapOfSubschemas[k]:
			out[k] = stripMap(val)
		case listOfSubschemas[k]:
			out[k] = stripEach(val)
		default:
			out[k] = val
		}
	}
	return out
}

// stripEach strips a schema or each schema of a list.
func stripEach(v any) any {
	list, ok := v.([]any)
	if !ok {
		return stripAnnotations(v)
	}
	out := make([]any, len(list))
	for i, s := range list {
		out[i] = stripAnnotations(s)
	}
	return out
}

// stripMap strips every schema of a name → schema map (a draft-4
// "dependencies" array value is data and stays).
func stripMap(v any) any {
	obj, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := make(map[string]any, len(obj))
	for k, s := range obj {
		out[k] = stripEach(s)
	}
	return out
}

// jsonEqual compares two decoded JSON values; numbers compare exactly by
// value (1 equals 1.0).
func jsonEqual(a, b any) bool {
	switch x := a.(type) {
	case json.Number:
		y, ok := b.(json.Number)
		return ok && numCmp(x, y) == 0
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !jsonEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !jsonEqual(v, w) {
				return false
			}
		}
		return true
	}
	return a == b
}

// numRat parses an exact number; ok is false for anything else.
func numRat(v any) (*big.Rat, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return nil, false
	}
	return new(big.Rat).SetString(string(n))
}

// numCmp compares two numbers exactly; unparsable ones compare by text.
func numCmp(a, b json.Number) int {
	x, okx := new(big.Rat).SetString(string(a))
	y, oky := new(big.Rat).SetString(string(b))
	if !okx || !oky {
		return strings.Compare(string(a), string(b))
	}
	return x.Cmp(y)
}

// acceptsAll reports whether a (stripped) schema accepts every value.
func acceptsAll(v any) bool {
	switch x := v.(type) {
	case bool:
		return x
	case map[string]any:
		for k := range x {
			if !schemaBookkeeping[k] {
				return false
			}
		}
		return true
	}
	return false
}

// acceptsNone reports whether a schema is the literal false.
func acceptsNone(v any) bool { b, ok := v.(bool); return ok && !b }

// resolveRef finds the target of an in-document reference: "#", a JSON
// pointer "#/..." or an anchor "#name". key names the target for cycle
// detection.
func resolveRef(root any, ref string) (target any, key string, err error) {
	frag, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil, "", fmt.Errorf("reference %q leaves the document", ref)
	}
	if frag, err = url.PathUnescape(frag); err != nil {
		return nil, "", fmt.Errorf("reference %q: %v", ref, err)
	}
	if frag == "" || strings.HasPrefix(frag, "/") {
		target, err = walkPointer(root, frag)
		return target, "#" + frag, err
	}
	if target, ok = findAnchor(root, frag); !ok {
		return nil, "", fmt.Errorf("anchor %q not found", frag)
	}
	return target, "#" + frag, nil
}

// walkPointer follows a JSON pointer (RFC 6901) from root.
func walkPointer(root any, ptr string) (any, error) {
	cur := root
	if ptr == "" {
		return cur, nil
	}
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		switch x := cur.(type) {
		case map[string]any:
			next, ok := x[tok]
			if !ok {
				return nil, fmt.Errorf("pointer %q: no member %q", ptr, tok)
			}
			cur = next
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				return nil, fmt.Errorf("pointer %q: no element %q", ptr, tok)
			}
			cur = x[i]
		default:
			return nil, fmt.Errorf("pointer %q: %q is not a container", ptr, tok)
		}
	}
	return cur, nil
}

// findAnchor searches the subschemas of v for "$anchor" (or
// "$dynamicAnchor") equal to name.
func findAnchor(v any, name string) (any, bool) {
	switch x := v.(type) {
	case []any:
		for _, s := range x {
			if t, ok := findAnchor(s, name); ok {
				return t, true
			}
		}
	case map[string]any:
		if x["$anchor"] == name || x["$dynamicAnchor"] == name {
			return x, true
		}
		for k, val := range x {
			if !oneSubschema[k] && !mapOfSubschemas[k] && !listOfSubschemas[k] {
				continue
			}
			if m, ok := val.(map[string]any); ok && mapOfSubschemas[k] {
				for _, s := range m {
					if t, ok := findAnchor(s, name); ok {
						return t, true
					}
				}
				continue
			}
			if t, ok := findAnchor(val, name); ok {
				return t, true
			}
		}
	}
	return nil, false
}
