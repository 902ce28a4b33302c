package main

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/narad/narad/adapters/httpclient"
)

// msgFormat is how sub and replay print a message.
type msgFormat int

const (
	// formatText is "[p<partition> @<offset>] key=<key> <time> <payload>".
	formatText msgFormat = iota
	// formatRaw is the payload's bytes alone.
	formatRaw
	// formatJSON is one line of JSON per message: the server's envelope
	// (api.md §2.14), for scripts and jq.
	formatJSON
)

// pickFormat reads --raw and --json, which exclude each other.
func pickFormat(raw, asJSON bool) (msgFormat, error) {
	switch {
	case raw && asJSON:
		return 0, usagef("--raw and --json exclude each other")
	case raw:
		return formatRaw, nil
	case asJSON:
		return formatJSON, nil
	}
	return formatText, nil
}

// jsonMessage is the envelope as the CLI prints it with --json: the fields
// the server sent, the key base64-encoded when it is binary.
type jsonMessage struct {
	Topic           string          `json:"topic"`
	Partition       int             `json:"partition"`
	Offset          int64           `json:"offset"`
	Key             *string         `json:"key,omitempty"`
	KeyEncoding     string          `json:"key_encoding,omitempty"`
	Payload         json.RawMessage `json:"payload"`
	PayloadEncoding string          `json:"payload_encoding,omitempty"`
	Timestamp       int64           `json:"timestamp"`
	ReceiptHandle   string          `json:"receipt_handle,omitempty"`
}

// printMessage writes one message in the chosen format.
func printMessage(w io.Writer, m httpclient.Message, format msgFormat) {
	switch format {
	case formatRaw:
		_, _ = w.Write(append(m.Body, '\n'))
	case formatJSON:
		printJSONMessage(w, m)
	default:
		printTextMessage(w, m)
	}
}

func printJSONMessage(w io.Writer, m httpclient.Message) {
	j := jsonMessage{Topic: m.Topic, Partition: m.Partition, Offset: m.Offset, Payload: m.Payload,
		Timestamp: m.Timestamp, ReceiptHandle: m.ReceiptHandle}
	if m.Key != nil {
		k := string(m.Key)
		if m.KeyBinary {
			k, j.KeyEncoding = base64.StdEncoding.EncodeToString(m.Key), "base64"
		}
		j.Key = &k
	}
	if m.Binary {
		j.PayloadEncoding = "base64"
	}
	line, err := json.Marshal(j)
	if err != nil { // a payload the server sent as invalid JSON: keep it, as a string
		j.Payload, _ = json.Marshal(string(m.Payload))
		line, _ = json.Marshal(j)
	}
	_, _ = w.Write(append(line, '\n'))
}

// printTextMessage writes "[p<partition> @<offset>] key=<key> <time> <payload>".
func printTextMessage(w io.Writer, m httpclient.Message) {
	var b strings.Builder
	fmt.Fprintf(&b, "[p%d @%d]", m.Partition, m.Offset)
	switch {
	case m.Key == nil:
	case utf8.Valid(m.Key):
		b.WriteString(" key=" + quoteIfNeeded(string(m.Key)))
	default:
		b.WriteString(" key=" + hex.EncodeToString(m.Key) + " (binary)")
	}
	b.WriteString(" " + time.Unix(m.Timestamp, 0).UTC().Format(time.RFC3339) + " ")
	if m.Binary {
		fmt.Fprintf(&b, "%s (%d bytes)", hex.EncodeToString(m.Body), len(m.Body))
	} else {
		b.Write(m.Body)
	}
	b.WriteByte('\n')
	_, _ = io.WriteString(w, b.String())
}

// quoteIfNeeded quotes a key holding spaces or control characters, so the
// line stays one line with one key field.
func quoteIfNeeded(s string) string {
	if s == "" || strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == '"' || r == 0x7f }) {
		return strconv.Quote(s)
	}
	return s
}
