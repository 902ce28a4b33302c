package httpclient_test

import (
	"encoding/json"
	"testing"

	"github.com/narad/narad/adapters/httpclient"
)

// ensure that a create and an alter send the dead-letter policy with both
// fields, that an alter sends null to clear it (next to a redelivery
// change) and nothing when it is left alone.
func TestDeadLetterBodies(t *testing.T) {
	t.Parallel()
	dl := &httpclient.DeadLetter{Topic: "jobs-dlq", MaxReceiveCount: 5}
	cases := map[string]struct {
		v    any
		want string
	}{
		"create":       {httpclient.TopicSpec{Name: "jobs", DeadLetter: dl}, `{"name":"jobs","dead_letter":{"topic":"jobs-dlq","max_receive_count":5}}`},
		"alter_set":    {httpclient.TopicAlter{DeadLetter: dl}, `{"dead_letter":{"topic":"jobs-dlq","max_receive_count":5}}`},
		"alter_clear":  {httpclient.TopicAlter{ClearDeadLetter: true, Redelivery: &httpclient.Redelivery{InitialMs: 10}}, `{"redelivery":{"initial_ms":10},"dead_letter":null}`},
		"alter_absent": {httpclient.TopicAlter{Partitions: 2}, `{"partitions":2}`},
	}
	for name, c := range cases {
		b, err := json.Marshal(c.v)
		if err != nil || string(b) != c.want {
			t.Errorf("%s: %s %v, want %s", name, b, err, c.want)
		}
	}
}
