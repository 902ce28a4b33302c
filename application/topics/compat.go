package topics

import (
	"fmt"
	"math/big"
	"slices"
	"strings"
)

// schemaIncompatible explains why a new schema version refuses some value
// the previous version accepted (api.md §2.8.1, "Compatibility"). The check
// fails closed: a keyword it cannot reason about must stay identical or be
// dropped.
type schemaIncompatible struct {
	path   string
	reason string
}

func (e *schemaIncompatible) Error() string {
	p := e.path
	if p == "" {
		p = "/"
	}
	return "at " + p + ": " + e.reason
}

func incompatible(path, format string, args ...any) error {
	return &schemaIncompatible{path: path, reason: fmt.Sprintf(format, args...)}
}

// compatible reports whether every value oldDoc accepts, newDoc accepts.
func compatible(oldDoc, newDoc []byte) error {
	oldV, err := decodeJSON(oldDoc)
	if err != nil {
		return incompatible("", "previous version does not decode: %v", err)
	}
	newV, err := decodeJSON(newDoc)
	if err != nil {
		return incompatible("", "new version does not decode: %v", err)
	}
	c := &compatCheck{oldRoot: stripAnnotations(oldV), newRoot: stripAnnotations(newV), seen: map[[2]string]bool{}}
	if err := c.draftUnchanged(); err != nil {
		return err
	}
	return c.schema(c.oldRoot, c.newRoot, "")
}

type compatCheck struct {
	oldRoot, newRoot any
	seen             map[[2]string]bool // reference pairs under comparison
}

func (c *compatCheck) draftUnchanged() error {
	o, _ := c.oldRoot.(map[string]any)
	n, _ := c.newRoot.(map[string]any)
	if !jsonEqual(o["$schema"], n["$schema"]) {
		return incompatible("", "$schema must not change")
	}
	return nil
}

// schema compares one subschema position.
func (c *compatCheck) schema(oldS, newS any, path string) error {
	switch {
	case newS == true, acceptsNone(oldS):
		return nil // an object, even {}, still goes through the keyword rules
	case acceptsNone(newS):
		return incompatible(path, "schema now refuses every value")
	}
	o, _ := oldS.(map[string]any)
	n, _ := newS.(map[string]any)
	if o == nil {
		o = map[string]any{} // old accepted everything
	}
	if n == nil {
		return incompatible(path, "schema is not an object")
	}
	for _, k := range keywordUnion(o, n) {
		if err := c.keyword(k, o, n, path); err != nil {
			return err
		}
	}
	return nil
}

func keywordUnion(o, n map[string]any) []string {
	keys := make([]string, 0, len(o)+len(n))
	for k := range o {
		keys = append(keys, k)
	}
	for k := range n {
		if _, ok := o[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// keyword applies the rule of keyword k. Dropping a keyword only widens,
// except "properties" (a property is never removed).
func (c *compatCheck) keyword(k string, o, n map[string]any, path string) error {
	oldV, oldHas := o[k]
	newV, newHas := n[k]
	if schemaBookkeeping[k] || (!newHas && k != "properties") {
		return nil
	}
	switch k {
	case "type":
		return typesWiden(oldV, oldHas, newV, path)
	case "enum", "const":
		return valuesWiden(o, n, path)
	case "minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum":
		return boundLoosens(k, oldV, oldHas, newV, path)
	case "multipleOf":
		return multipleLoosens(oldV, oldHas, newV, path)
	case "minLength", "minItems", "minProperties", "minContains":
		return minLoosens(k, oldV, oldHas, newV, path)
	case "maxLength", "maxItems", "maxProperties", "maxContains":
		return maxLoosens(k, oldV, oldHas, newV, path)
	case "uniqueItems":
		if newV == true && oldV != true {
			return incompatible(path, "uniqueItems added")
		}
		return nil
	case "required":
		return requiredShrinks(oldV, newV, path)
	case "properties":
		return c.properties(o, n, path)
	case "additionalProperties":
		return c.additional(oldV, oldHas, newV, path+"/additionalProperties")
	case "items":
		return c.items(oldV, oldHas, newV, path+"/items")
	case "anyOf":
		return c.anyOf(oldV, oldHas, newV, path)
	case "allOf":
		return c.allOf(oldV, oldHas, newV, path)
	case "$ref":
		return c.ref(oldV, oldHas, newV, path)
	case "$dynamicRef":
		if !jsonEqual(c.oldRoot, c.newRoot) {
			return incompatible(path, "a schema using $dynamicRef may only change its annotations")
		}
	}
	return identical(k, oldV, oldHas, newV, path)
}

// identical is the fail-closed rule: the keyword stays as it was.
func identical(k string, oldV any, oldHas bool, newV any, path string) error {
	if oldHas && jsonEqual(oldV, newV) {
		return nil
	}
	if !oldHas {
		return incompatible(path, "%s added", k)
	}
	return incompatible(path, "%s changed (it may only stay identical or be removed)", k)
}

func typeList(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, t := range x {
			if s, ok := t.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

func typesWiden(oldV any, oldHas bool, newV any, path string) error {
	newTypes := typeList(newV)
	if !oldHas {
		return incompatible(path, "type %s added", strings.Join(quoteAll(newTypes), ", "))
	}
	for _, t := range typeList(oldV) {
		if slices.Contains(newTypes, t) || (t == "integer" && slices.Contains(newTypes, "number")) {
			continue
		}
		return incompatible(path, "type %q no longer allowed", t)
	}
	return nil
}

func quoteAll(xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = fmt.Sprintf("%q", x)
	}
	return out
}

// allowedValues is the value set const and enum leave; nil = unrestricted.
func allowedValues(s map[string]any) []any {
	var vals []any
	restricted := false
	if e, ok := s["enum"].([]any); ok {
		vals, restricted = e, true
	}
	if cv, ok := s["const"]; ok {
		vals, restricted = []any{cv}, true
		if e, ok := s["enum"].([]any); ok && !slices.ContainsFunc(e, func(v any) bool { return jsonEqual(v, cv) }) {
			vals = []any{}
		}
	}
	if restricted && vals == nil {
		vals = []any{}
	}
	return vals
}

func valuesWiden(o, n map[string]any, path string) error {
	newVals := allowedValues(n)
	if newVals == nil {
		return nil
	}
	oldVals := allowedValues(o)
	if oldVals == nil {
		return incompatible(path, "enum/const added")
	}
	for _, v := range oldVals {
		if !slices.ContainsFunc(newVals, func(w any) bool { return jsonEqual(v, w) }) {
			return incompatible(path, "value %v no longer allowed by enum/const", v)
		}
	}
	return nil
}

func boundLoosens(k string, oldV any, oldHas bool, newV any, path string) error {
	if b, ok := newV.(bool); ok { // draft-4 exclusive flags
		if !b || oldV == true {
			return nil
		}
		return incompatible(path, "%s turned on", k)
	}
	if !oldHas {
		return incompatible(path, "%s added", k)
	}
	o, okO := numRat(oldV)
	n, okN := numRat(newV)
	if !okO || !okN {
		return identical(k, oldV, oldHas, newV, path)
	}
	lower := strings.HasPrefix(k, "exclusiveMin") || k == "minimum"
	if (lower && n.Cmp(o) > 0) || (!lower && n.Cmp(o) < 0) {
		return incompatible(path, "%s tightened from %s to %s", k, o.RatString(), n.RatString())
	}
	return nil
}

func multipleLoosens(oldV any, oldHas bool, newV any, path string) error {
	if !oldHas {
		return incompatible(path, "multipleOf added")
	}
	o, okO := numRat(oldV)
	n, okN := numRat(newV)
	if !okO || !okN || n.Sign() == 0 || !new(big.Rat).Quo(o, n).IsInt() {
		return incompatible(path, "multipleOf may only change to a divisor of %v", oldV)
	}
	return nil
}

func minLoosens(k string, oldV any, oldHas bool, newV any, path string) error {
	n, ok := numRat(newV)
	if !oldHas {
		if ok && n.Sign() == 0 {
			return nil
		}
		return incompatible(path, "%s added", k)
	}
	o, okO := numRat(oldV)
	if !ok || !okO || n.Cmp(o) > 0 {
		return incompatible(path, "%s raised from %v to %v", k, oldV, newV)
	}
	return nil
}

func maxLoosens(k string, oldV any, oldHas bool, newV any, path string) error {
	if !oldHas {
		return incompatible(path, "%s added", k)
	}
	o, okO := numRat(oldV)
	n, okN := numRat(newV)
	if !okO || !okN || n.Cmp(o) < 0 {
		return incompatible(path, "%s lowered from %v to %v", k, oldV, newV)
	}
	return nil
}

func requiredShrinks(oldV, newV any, path string) error {
	old := typeList(oldV)
	for _, name := range typeList(newV) {
		if !slices.Contains(old, name) {
			return incompatible(path, "property %q newly required", name)
		}
	}
	return nil
}
