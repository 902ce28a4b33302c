package topics

import "fmt"

// properties: every old property stays and stays compatible; a new property
// is allowed where the old model was open (the spec's deliberate gap) or
// closed, and checked against the old additionalProperties schema otherwise.
func (c *compatCheck) properties(o, n map[string]any, path string) error {
	oldProps, _ := o["properties"].(map[string]any)
	newProps, _ := n["properties"].(map[string]any)
	for name, oldP := range oldProps {
		newP, ok := newProps[name]
		if !ok {
			return incompatible(path, "property %q removed", name)
		}
		if err := c.schema(oldP, newP, path+"/properties/"+escapePointer(name)); err != nil {
			return err
		}
	}
	extra, closedOrOpen := o["additionalProperties"]
	if !closedOrOpen || acceptsAll(extra) || acceptsNone(extra) {
		return nil
	}
	for name, newP := range newProps {
		if _, ok := oldProps[name]; ok {
			continue
		}
		if err := c.schema(extra, newP, path+"/properties/"+escapePointer(name)); err != nil {
			return err
		}
	}
	return nil
}

// additional: false may open; a schema may only widen.
func (c *compatCheck) additional(oldV any, oldHas bool, newV any, path string) error {
	if !oldHas {
		oldV = true
	}
	return c.schema(oldV, newV, path)
}

// items: a single schema may widen; the tuple form stays identical.
func (c *compatCheck) items(oldV any, oldHas bool, newV any, path string) error {
	_, oldTuple := oldV.([]any)
	_, newTuple := newV.([]any)
	if oldTuple || newTuple {
		return identical("items", oldV, oldHas, newV, path)
	}
	if !oldHas {
		oldV = true
	}
	return c.schema(oldV, newV, path)
}

// anyOf: every old branch is covered by some new branch.
func (c *compatCheck) anyOf(oldV any, oldHas bool, newV any, path string) error {
	newBranches, _ := newV.([]any)
	oldBranches, _ := oldV.([]any)
	if !oldHas {
		oldBranches = []any{true}
	}
	for i, ob := range oldBranches {
		if !c.anyCovers(ob, newBranches, path) {
			return incompatible(path, "anyOf branch %d of the previous version is not covered", i)
		}
	}
	return nil
}

func (c *compatCheck) anyCovers(ob any, newBranches []any, path string) bool {
	for j, nb := range newBranches {
		if c.schema(ob, nb, fmt.Sprintf("%s/anyOf/%d", path, j)) == nil {
			return true
		}
	}
	return false
}

// allOf: every new branch is implied by some old branch.
func (c *compatCheck) allOf(oldV any, oldHas bool, newV any, path string) error {
	newBranches, _ := newV.([]any)
	oldBranches, _ := oldV.([]any)
	if !oldHas {
		oldBranches = []any{true}
	}
	for j, nb := range newBranches {
		if !c.implied(nb, oldBranches, fmt.Sprintf("%s/allOf/%d", path, j)) {
			return incompatible(path, "allOf branch %d is not implied by the previous version", j)
		}
	}
	return nil
}

func (c *compatCheck) implied(nb any, oldBranches []any, path string) bool {
	for _, ob := range oldBranches {
		if c.schema(ob, nb, path) == nil {
			return true
		}
	}
	return false
}

// ref compares the targets of in-document references; a pair whose
// comparison is still under way is assumed compatible (recursive schemas).
func (c *compatCheck) ref(oldV any, oldHas bool, newV any, path string) error {
	newRef, ok := newV.(string)
	if !ok {
		return incompatible(path, "$ref is not a string")
	}
	newT, newKey, err := resolveRef(c.newRoot, newRef)
	if err != nil {
		return incompatible(path, "%v", err)
	}
	var oldT any = true
	oldKey := ""
	if oldRef, ok := oldV.(string); oldHas && ok {
		if oldT, oldKey, err = resolveRef(c.oldRoot, oldRef); err != nil {
			return incompatible(path, "%v", err)
		}
	}
	pair := [2]string{oldKey, newKey}
	if c.seen[pair] {
		return nil
	}
	c.seen[pair] = true
	defer delete(c.seen, pair) // only pairs still on the stack are assumed
	return c.schema(oldT, newT, path+"/$ref")
}

// escapePointer escapes one JSON pointer token.
func escapePointer(tok string) string {
	out := make([]byte, 0, len(tok))
	for i := 0; i < len(tok); i++ {
		switch tok[i] {
		case '~':
			out = append(out, '~', '0')
		case '/':
			out = append(out, '~', '1')
		default:
			out = append(out, tok[i])
		}
	}
	return string(out)
}
