package jsonschema

import "time"

// Observer receives the validator's measurements (api.md §7:
// narad_schema_validation_seconds, narad_schema_validations_in_flight,
// narad_schema_rejections_total). Calls come from every produce that
// validates: an implementation must be safe for concurrent use, cheap, and
// must never block. Options.Observer nil observes nothing.
type Observer interface {
	// ValidationStarted reports a validation starting under a slot.
	ValidationStarted()
	// ValidationFinished reports that validation ending after took.
	ValidationFinished(took time.Duration)
	// Rejected reports one payload or schema refused, by reason (Reason*).
	Rejected(reason string)
}

// The reasons Rejected reports (narad_schema_rejections_total's reason label).
const (
	ReasonDepth     = "depth"     // nesting over the limit
	ReasonMalformed = "malformed" // not one JSON text in valid UTF-8, or an exponent out of range
	ReasonInvalid   = "invalid"   // a payload the schema refuses, or a document that is no acceptable schema
	ReasonBusy      = "busy"      // no validation slot within the wait bound
	ReasonCanceled  = "canceled"  // the request ended while waiting for a slot
)

type nopObserver struct{}

func (nopObserver) ValidationStarted()               {}
func (nopObserver) ValidationFinished(time.Duration) {}
func (nopObserver) Rejected(string)                  {}
