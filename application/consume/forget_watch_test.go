package consume_test

import (
	"testing"
	"time"

	"github.com/narad/narad/application/consume"
	"github.com/narad/narad/domain/meta"
)

// ensure that a delete applied through the metadata log alone (no direct
// Forget call, as on a node that did not serve the delete) drops the
// incarnation's consumer state: parked consumers are answered at once (F29).
func TestForgetDeletedFollowsTheMetadataLog(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{})
	e.run()
	e.followMetadata()

	tp := e.createTopic("orders", 1, nil, nil)
	got := e.longPoll(t.Context(), consume.Request{Topic: "orders", Wait: 10 * time.Second})
	e.parked(1)
	e.propose(&meta.DeleteTopicIf{Name: tp.Name, ID: tp.ID})
	if r := <-got; r.err != nil || len(r.ds) != 0 || r.at > 5*time.Second {
		t.Fatalf("parked consumer after the delete: %+v", r)
	}
}
