package telemetry

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/narad/narad/ports"
)

// ensure that audit lines are written at info with component=audit even
// when the process logs only warnings, and leave empty fields out.
func TestAuditIgnoresLogLevel(t *testing.T) {
	var out bytes.Buffer
	base, err := NewLogger(LogOptions{Level: "error", Format: "json", Output: &out})
	if err != nil {
		t.Fatal(err)
	}
	base.Info("not written")
	NewAudit(base).Record(ports.AuditEvent{Event: ports.AuditUserCreate, Actor: "admin", Subject: "user bob", Outcome: ports.AuditOK})
	var line map[string]any
	if err := json.Unmarshal(out.Bytes(), &line); err != nil {
		t.Fatalf("%q: %v", out.String(), err)
	}
	if line["component"] != "audit" || line["event"] != "user.create" || line["actor"] != "admin" || line["level"] != "info" {
		t.Fatalf("line %v", line)
	}
	if _, ok := line["reason"]; ok {
		t.Fatalf("empty reason written: %v", line)
	}
}
