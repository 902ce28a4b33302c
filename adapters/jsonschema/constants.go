package jsonschema

import "time"

// Spec constants (api.md §0.8, §2.8.1). Units are in the names.
const (
	// SchemaDocMaxBytes caps a schema document.
	SchemaDocMaxBytes = 256 << 10
	// SchemaNestingMaxLevels caps a schema document's nesting.
	SchemaNestingMaxLevels = 64
	// PayloadNestingMaxLevels caps a validated payload's nesting.
	PayloadNestingMaxLevels = 256
	// NumberExponentMax bounds a payload number's decimal exponent.
	NumberExponentMax = 1000
	// MessageMaxBytes cuts a refusal's message.
	MessageMaxBytes = 2 << 10
	// SlotWaitDefault bounds the wait for a validation slot.
	SlotWaitDefault = 5 * time.Second
	// CacheMaxEntries bounds the compiled-schema cache.
	CacheMaxEntries = 4096
)

// Refusal texts the clients match (api.md §2.8.1, appendix B.2).
const (
	msgPrefix     = "invalid argument: schema: "
	msgSlotBusy   = "schema: validation capacity busy, retry: no schema validation slot on this node freed up within %s, so the payload was not validated; retry, preferably through another node"
	msgSlotCtxEnd = "schema: payload not validated: %v while waiting for a schema validation slot"
	msgTooDeep    = "payload nests deeper than 256 levels"
	// baseURL names the document being compiled; references that leave it
	// resolve elsewhere and are refused by the loader.
	baseURL = "https://schema.narad.invalid/topic.json"
)
