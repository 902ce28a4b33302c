package httpapi

import (
	"testing"

	"go.uber.org/zap"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/application/membership"
	"github.com/narad/narad/application/produce"
	"github.com/narad/narad/domain/meta"
)

// Ensure that a draining node answers every client produce, single and
// batch, 503 with Retry-After: 1 and stores nothing, and takes produces
// again once the mark is cleared (api.md §2.17).
func TestDrainingNodeRefusesProduces(t *testing.T) {
	p := newProduceEnv(t)
	p.propose(t, &meta.MemberJoin{ID: "n1", Addr: "n1:7942", ClusterAddr: "n1:7943"})
	p.svc = produce.NewService(produce.ServiceDeps{Topics: p.store, WAL: p.wal, Schemas: p.schemas, Clock: p.clock,
		Metrics: &fake.Metrics{}, Drain: membership.NewSelfDrain(p.store, "n1")})
	p.engine = NewEngine(zap.NewNop(), ProduceRoutes(p.svc, zap.NewNop())...)
	p.create(t, "t", 1)
	p.propose(t, &meta.SetMemberDraining{ID: "n1", Draining: true})
	for _, path := range []string{"/v1/topics/t/produce", "/v1/topics/t/produce/batch"} {
		body := []byte(`{"a":1}`)
		if path != "/v1/topics/t/produce" {
			body = []byte(`{"messages":[{"payload":{"a":1}}]}`)
		}
		rec := p.post(path, body)
		if rec.Code != 503 || rec.Header().Get("Retry-After") != "1" ||
			rec.Body.String() != `{"error":"this node is being decommissioned and takes no new produce; send it to another node"}`+"\n" {
			t.Fatalf("%s while draining: %d %q %s", path, rec.Code, rec.Header().Get("Retry-After"), rec.Body.String())
		}
	}
	if got := len(p.stored(t)); got != 0 {
		t.Fatalf("%d records stored while draining", got)
	}
	p.propose(t, &meta.SetMemberDraining{ID: "n1", Draining: false})
	if rec := p.post("/v1/topics/t/produce", []byte(`{"a":1}`)); rec.Code != 202 {
		t.Fatalf("after the cancel: %d %s", rec.Code, rec.Body.String())
	}
}
