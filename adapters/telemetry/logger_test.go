package telemetry

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// ensure that the default format is one JSON object per line with level and message, and levels filter.
func TestJSONLogger(t *testing.T) {
	var buf bytes.Buffer
	log, err := NewLogger(LogOptions{Level: "info", Format: "json", Output: &buf})
	if err != nil {
		t.Fatal(err)
	}
	log.Debug("hidden")
	log.Info("node started")
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatalf("not one JSON line: %q: %v", buf.String(), err)
	}
	if line["level"] != "info" || line["msg"] != "node started" || line["ts"] == nil {
		t.Fatalf("line %v", line)
	}
}

// ensure that text format is human-readable and bad settings are refused by name.
func TestTextLoggerAndBadOptions(t *testing.T) {
	var buf bytes.Buffer
	log, err := NewLogger(LogOptions{Level: "WARN", Format: "text", Output: &buf})
	if err != nil {
		t.Fatal(err)
	}
	log.Warn("disk nearly full")
	if !strings.Contains(buf.String(), "WARN") || strings.HasPrefix(buf.String(), "{") {
		t.Fatalf("text line %q", buf.String())
	}
	if _, err := NewLogger(LogOptions{Level: "loud"}); err == nil || !strings.Contains(err.Error(), "loud") {
		t.Fatalf("bad level: %v", err)
	}
	if _, err := NewLogger(LogOptions{Level: "info", Format: "xml"}); err == nil || !strings.Contains(err.Error(), "xml") {
		t.Fatalf("bad format: %v", err)
	}
}
