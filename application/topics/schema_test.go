package topics_test

import (
	"context"
	"strings"
	"testing"

	"github.com/narad/narad/application/topics"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
)

const schemaV1 = `{"type":"object","properties":{"id":{"type":"integer"}},"required":["id"]}`

func (f *fixture) history(t *testing.T, name string) topics.History {
	t.Helper()
	h, err := f.svc.SchemaHistory(context.Background(), anyone, name)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// Ensure that compatible versions register in order and incompatible ones
// are refused naming the change (conformance 60, 178).
func TestAlterSchemaVersions(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.create(t, topics.CreateRequest{Caller: anyone, Name: "t"})
	if h := f.history(t, "t"); h.Version != 0 || len(h.Versions) != 0 || h.Versions == nil {
		t.Fatalf("schema-less history: %+v", h)
	}
	f.alter(t, topics.AlterRequest{Caller: anyone, Name: "t", Schema: []byte(schemaV1)})
	v2 := `{"type":"object","properties":{"id":{"type":"integer"},"note":{"type":"string"}},"required":["id"]}`
	f.alter(t, topics.AlterRequest{Caller: anyone, Name: "t", Schema: []byte(v2)})
	refused := map[string]string{
		"type_changed":     `{"type":"object","properties":{"id":{"type":"string"},"note":{"type":"string"}},"required":["id"]}`,
		"property_removed": `{"type":"object","properties":{"id":{"type":"integer"}},"required":["id"]}`,
		"new_required":     `{"type":"object","properties":{"id":{"type":"integer"},"note":{"type":"string"}},"required":["id","note"]}`,
	}
	for name, doc := range refused {
		_, err := f.svc.Alter(context.Background(), topics.AlterRequest{Caller: anyone, Name: "t", Schema: []byte(doc)})
		t.Run(name, func(t *testing.T) {
			wantRefusal(t, err, domain.ErrInvalidArgument, "")
			if !strings.HasPrefix(err.Error(), "invalid argument: schema incompatible with previous version: at ") {
				t.Fatalf("message %q", err)
			}
		})
	}
	h := f.history(t, "t")
	if h.Version != 2 || len(h.Versions) != 2 || h.Versions[0].Version != 1 || h.Versions[1].Version != 2 {
		t.Fatalf("history: %+v", h)
	}
}

// Ensure that the current schema again, reformatted or changed only in
// annotations, registers nothing (conformance 179, 182).
func TestAlterSameSchemaRegistersNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.create(t, topics.CreateRequest{Caller: anyone, Name: "t", Schema: []byte(schemaV1)})
	for _, doc := range []string{
		`{ "required": ["id"], "properties": {"id": {"type": "integer"}}, "type": "object" }`,
		`{"type":"object","description":"orders","properties":{"id":{"type":"integer","title":"id"}},"required":["id"]}`,
	} {
		f.alter(t, topics.AlterRequest{Caller: anyone, Name: "t", Schema: []byte(doc)})
	}
	if h := f.history(t, "t"); h.Version != 1 || len(h.Versions) != 1 {
		t.Fatalf("history: %+v", h)
	}
}

// Ensure that schema_base_version must equal the current version
// (conformance 180).
func TestAlterSchemaBaseVersion(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.create(t, topics.CreateRequest{Caller: anyone, Name: "t", Schema: []byte(schemaV1)})
	v2 := `{"type":"object","properties":{"id":{"type":"integer"},"n":{}},"required":["id"]}`
	_, err := f.svc.Alter(context.Background(), topics.AlterRequest{Caller: anyone, Name: "t", Schema: []byte(v2), SchemaBaseVersion: ptr(int64(5))})
	wantRefusal(t, err, domain.ErrConflict, "schema version conflict")
	f.alter(t, topics.AlterRequest{Caller: anyone, Name: "t", Schema: []byte(v2), SchemaBaseVersion: ptr(int64(1))})
	if h := f.history(t, "t"); h.Version != 2 {
		t.Fatalf("history: %+v", h)
	}
}

// Ensure that an attached child's schema is parent-managed (api.md §2.8.1)
// and a missing topic's history is 404.
func TestAlterSchemaOfChildAndMissing(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.create(t, topics.CreateRequest{Caller: anyone, Name: "p"})
	f.create(t, topics.CreateRequest{Caller: anyone, Name: "c"})
	f.propose(t, &meta.AttachChild{Parent: "p", Child: "c", Epoch: "00000000000000e1"})
	_, err := f.svc.Alter(context.Background(), topics.AlterRequest{Caller: anyone, Name: "c", Schema: []byte(`true`)})
	wantRefusal(t, err, domain.ErrConflict, "")
	if !strings.HasPrefix(err.Error(), "schema is parent-managed while attached to a fan-out parent: ") {
		t.Fatalf("message %q", err)
	}
	_, err = f.svc.SchemaHistory(context.Background(), anyone, "missing")
	wantRefusal(t, err, domain.ErrTopicNotFound, "")
}
