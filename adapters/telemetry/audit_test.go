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

// ensure that a remote write's lines carry its request id, and the
// leader's line says it is the leader's (internals.md §7.10).
func TestAuditRemoteWriteLines(t *testing.T) {
	var out bytes.Buffer
	base, err := NewLogger(LogOptions{Level: "info", Format: "json", Output: &out})
	if err != nil {
		t.Fatal(err)
	}
	a := NewAudit(base)
	a.Record(ports.AuditEvent{Event: ports.AuditRemoteCreate, Actor: "admin", Subject: "remote dr", Outcome: ports.AuditCommitted,
		RequestID: "0123456789abcdef", Leader: true})
	a.Record(ports.AuditEvent{Event: ports.AuditRemoteCreate, Actor: "admin", Subject: "remote dr", Outcome: ports.AuditOK, RequestID: "0123456789abcdef"})
	lines := bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n"))
	var leader, ingress map[string]any
	if len(lines) != 2 || json.Unmarshal(lines[0], &leader) != nil || json.Unmarshal(lines[1], &ingress) != nil {
		t.Fatalf("%q", out.String())
	}
	if leader["request_id"] != "0123456789abcdef" || leader["leader"] != true || leader["outcome"] != "committed" {
		t.Fatalf("leader's line %v", leader)
	}
	if ingress["request_id"] != "0123456789abcdef" || ingress["leader"] != nil {
		t.Fatalf("ingress line %v", ingress)
	}
}
