package meta

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Wire format of one metadata entry, as Raft replicates it:
//
//	+---------+------------+-------------------------------------------+
//	| version | entry type | canonical JSON {"actor","at_ms","d":{..}} |
//	| 1 byte  | 1 byte     | rest of the entry                         |
//	+---------+------------+-------------------------------------------+
//
// The JSON is what encoding/json writes for the event structs: field order
// fixed by the struct, no maps, []byte as base64, so one event always encodes
// to the same bytes. The constants below are part of the replicated format
// and must not be changed.
const (
	// FormatVersion is the only envelope version this build reads and writes.
	FormatVersion byte = 1
	// headerBytes is the version byte plus the entry-type byte.
	headerBytes = 2
	// MaxEntryBytes caps one encoded entry (a schema is ≤ 256 KiB, a CA
	// bundle ≤ 64 KiB), so a corrupt length can never drive a huge decode.
	MaxEntryBytes = 4 << 20
)

// Event is one metadata entry's payload. Implementations live in this package
// only: apply is unexported so every rule is written here.
type Event interface {
	// Type is the frozen entry-type number.
	Type() EntryType
	// Validate checks the pure rules (names, ids, ranges); errors wrap
	// ErrInvalidEvent.
	Validate() error
	// Subject names what the entry changes, for the history ("topic orders").
	Subject() string
	apply(t *tx, env Envelope) (Result, error)
}

// Envelope is one proposal: the event plus who proposed it and when. Apply
// takes every time it stamps from AtMs, never from a clock.
type Envelope struct {
	Actor string
	AtMs  int64
	Event Event
}

// AtSeconds is the envelope time in Unix seconds.
func (e Envelope) AtSeconds() int64 { return e.AtMs / 1000 }

type wireEnvelope struct {
	Actor string          `json:"actor"`
	AtMs  int64           `json:"at_ms"`
	D     json.RawMessage `json:"d"`
}

// Encode returns the wire bytes of env. It refuses an event of a type this
// build does not apply and an entry above MaxEntryBytes.
func Encode(env Envelope) ([]byte, error) {
	if env.Event == nil {
		return nil, fmt.Errorf("encode: nil event: %w", ErrInvalidEvent)
	}
	t := env.Event.Type()
	if !Applies(t) {
		return nil, fmt.Errorf("encode %s: %w", t, ErrUnknownEntryType)
	}
	payload, err := json.Marshal(env.Event)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", t, err)
	}
	body, err := json.Marshal(wireEnvelope{Actor: env.Actor, AtMs: env.AtMs, D: payload})
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", t, err)
	}
	if headerBytes+len(body) > MaxEntryBytes {
		return nil, fmt.Errorf("encode %s: %d bytes above %d: %w", t, headerBytes+len(body), MaxEntryBytes, ErrInvalidEvent)
	}
	out := make([]byte, 0, headerBytes+len(body))
	out = append(out, FormatVersion, byte(t))
	return append(out, body...), nil
}

// Decode parses wire bytes. Errors: ErrUnknownEventVersion,
// ErrUnknownEntryType, ErrCorruptEvent (each wrapped with detail). Decode
// checks structure only; Validate and apply judge the content.
func Decode(b []byte) (Envelope, error) {
	if len(b) < headerBytes {
		return Envelope{}, fmt.Errorf("decode: %d bytes, header needs %d: %w", len(b), headerBytes, ErrCorruptEvent)
	}
	if b[0] != FormatVersion {
		return Envelope{}, fmt.Errorf("decode: version %d, this build reads %d: %w", b[0], FormatVersion, ErrUnknownEventVersion)
	}
	t := EntryType(b[1])
	ev, ok := newEvent(t)
	if !ok {
		return Envelope{}, fmt.Errorf("decode: %s is not applied by this build: %w", t, ErrUnknownEntryType)
	}
	if len(b) > MaxEntryBytes {
		return Envelope{}, fmt.Errorf("decode %s: %d bytes above %d: %w", t, len(b), MaxEntryBytes, ErrCorruptEvent)
	}
	var w wireEnvelope
	if err := strictUnmarshal(b[headerBytes:], &w); err != nil {
		return Envelope{}, fmt.Errorf("decode %s envelope: %v: %w", t, err, ErrCorruptEvent)
	}
	if len(w.D) == 0 || bytes.Equal(w.D, []byte("null")) {
		return Envelope{}, fmt.Errorf("decode %s: no payload: %w", t, ErrCorruptEvent)
	}
	if err := strictUnmarshal(w.D, ev); err != nil {
		return Envelope{}, fmt.Errorf("decode %s payload: %v: %w", t, err, ErrCorruptEvent)
	}
	return Envelope{Actor: w.Actor, AtMs: w.AtMs, Event: ev}, nil
}

// DecodePayload parses the JSON payload of one event of type t (the "d"
// object), for tools and test scripts that write events by hand.
func DecodePayload(t EntryType, payload []byte) (Event, error) {
	ev, ok := newEvent(t)
	if !ok {
		return nil, fmt.Errorf("decode payload: %s: %w", t, ErrUnknownEntryType)
	}
	if err := strictUnmarshal(payload, ev); err != nil {
		return nil, fmt.Errorf("decode %s payload: %v: %w", t, err, ErrCorruptEvent)
	}
	return ev, nil
}

// strictUnmarshal decodes exactly one JSON value with no unknown field and no
// trailing data: a field this build does not know means a newer format.
func strictUnmarshal(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}
