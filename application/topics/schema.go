package topics

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/narad/narad/domain/access"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
)

// registrable checks a schema document against the registration rules
// (api.md §2.8.1) and returns it compacted, as it is stored.
func (s *Service) registrable(doc []byte) ([]byte, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, doc); err != nil {
		return nil, domain.Refuse(domain.ErrInvalidArgument, "schema is not valid JSON")
	}
	compact := buf.Bytes()
	if err := s.schemas.Check(compact); err != nil {
		return nil, err
	}
	return compact, nil
}

// alterSchema registers req.Schema as the next version, unless it equals the
// current one but for annotations. A lost race re-reads and retries once.
func (s *Service) alterSchema(ctx context.Context, req AlterRequest) error {
	doc, err := s.registrable(req.Schema)
	if err != nil {
		return err
	}
	for attempt := 1; attempt <= casAttempts; attempt++ {
		next, err := s.nextSchemaVersion(req, doc)
		if err != nil || next == nil {
			return err
		}
		applied, err := s.store.Propose(ctx, s.envelope(req.Caller.Name, next))
		if err != nil {
			return proposeFailure(err)
		}
		switch res := applied.Result; res.Code {
		case meta.CodeOK:
			return nil
		case meta.CodeNotFound:
			return domain.ErrTopicNotFound
		case meta.CodeRefused:
			return domain.Refuse(domain.ErrConflict, res.Detail)
		case meta.CodeConflict:
			continue // another incarnation or another version landed: re-read
		default:
			return fmt.Errorf("topics: register schema of %q: %w", req.Name, res.Err())
		}
	}
	return domain.ErrTopicChanged
}

// nextSchemaVersion reads the topic and its history and returns the entry
// registering doc, or nil when doc changes nothing.
func (s *Service) nextSchemaVersion(req AlterRequest, doc []byte) (meta.Event, error) {
	t, err := s.readTopic(req.Name)
	if err == nil {
		err = mayModify(req.Caller, t) // a recreated incarnation is judged again
	}
	if err != nil {
		return nil, err
	}
	history, err := s.store.Schemas(t.Name)
	if err != nil {
		return nil, readFailure(err)
	}
	current := int32(0)
	if n := len(history); n > 0 {
		current = history[n-1].Version
	}
	if req.SchemaBaseVersion != nil && *req.SchemaBaseVersion != int64(current) {
		return nil, domain.Refuse(domain.ErrConflict, "schema version conflict")
	}
	if current > 0 && sameSchema(history[len(history)-1].Schema, doc) {
		return nil, nil
	}
	if err := checkSchemaChange(t, history, doc); err != nil {
		return nil, err
	}
	put := meta.PutSchema{Topic: t.Name, Version: current + 1, Schema: doc}
	if t.ID == "" {
		return &put, nil
	}
	return &meta.PutSchemaIf{PutSchema: put, ID: t.ID}, nil
}

// checkSchemaChange applies the rules a new version must pass on t.
func checkSchemaChange(t meta.Topic, history []meta.SchemaVersion, doc []byte) error {
	switch {
	case t.Parent != "":
		return domain.Refuse(domain.ErrConflict,
			fmt.Sprintf("schema is parent-managed while attached to a fan-out parent: %q follows %q", t.Name, t.Parent))
	case len(history) >= SchemaVersionsMaxCount:
		return domain.Refuse(domain.ErrConflict, "schema history is full")
	case len(history) == 0:
		return nil
	}
	if err := compatible(history[len(history)-1].Schema, doc); err != nil {
		return invalidArg("schema incompatible with previous version: %v", err)
	}
	return nil
}

// sameSchema reports whether two documents are one JSON value once
// annotations are set aside: registering b would change nothing.
func sameSchema(a, b []byte) bool {
	x, err := decodeJSON(a)
	if err != nil {
		return false
	}
	y, err := decodeJSON(b)
	if err != nil {
		return false
	}
	return jsonEqual(stripAnnotations(x), stripAnnotations(y))
}

// History is a topic's schema history (api.md §2.9.1).
type History struct {
	Topic    string
	Version  int32 // current version, 0 without a schema
	Versions []meta.SchemaVersion
}

// SchemaHistory returns every schema version of topic name, oldest first.
func (s *Service) SchemaHistory(_ context.Context, caller access.Principal, name string) (History, error) {
	t, err := s.readTopic(name)
	if err == nil {
		err = mayRead(caller, t)
	}
	if err != nil {
		return History{}, err
	}
	versions, err := s.store.Schemas(name)
	if err != nil {
		return History{}, readFailure(err)
	}
	h := History{Topic: name, Versions: versions}
	if h.Versions == nil {
		h.Versions = []meta.SchemaVersion{}
	}
	if n := len(versions); n > 0 {
		h.Version = versions[n-1].Version
	}
	return h, nil
}
