package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/narad/narad/application/topics"
	"github.com/narad/narad/domain/meta"
)

// deadLetterJSON is a topic's dead-letter policy (our extension,
// docs/api-extensions.md "Dead letters"). In a request both fields are
// required (the service names a missing one); in an answer both are set.
type deadLetterJSON struct {
	Topic           *string `json:"topic"`
	MaxReceiveCount *int64  `json:"max_receive_count"`
}

func (d *deadLetterJSON) request() *topics.DeadLetterRequest {
	if d == nil {
		return nil
	}
	return &topics.DeadLetterRequest{Topic: d.Topic, MaxReceiveCount: d.MaxReceiveCount}
}

func deadLetterView(p *meta.DeadLetter) *deadLetterJSON {
	if p == nil {
		return nil
	}
	n := int64(p.MaxReceiveCount)
	return &deadLetterJSON{Topic: &p.Topic, MaxReceiveCount: &n}
}

// alterDeadLetter reads an alter's "dead_letter": absent leaves the policy
// alone, null clears it, an object sets it (unknown fields refused).
func alterDeadLetter(raw json.RawMessage, req *topics.AlterRequest) error {
	if len(raw) == 0 {
		return nil
	}
	if string(raw) == "null" {
		req.ClearDeadLetter = true
		return nil
	}
	var d deadLetterJSON
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		return clientErr(http.StatusBadRequest, "invalid json: dead_letter: %v", err)
	}
	req.DeadLetter = d.request()
	return nil
}
