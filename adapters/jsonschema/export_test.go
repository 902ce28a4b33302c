package jsonschema

// HoldSlotForTest takes a validation slot until the returned release runs.
func (v *Validator) HoldSlotForTest() (release func()) {
	v.slots <- struct{}{}
	return func() { <-v.slots }
}
