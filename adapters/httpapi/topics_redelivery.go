package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/narad/narad/application/topics"
	"github.com/narad/narad/domain/meta"
)

// redeliveryJSON is a topic's redelivery backoff (our extension,
// docs/api-extensions.md "Redelivery backoff"). In a request a missing
// field takes its default; in an answer every field is set.
type redeliveryJSON struct {
	InitialMs  *int64   `json:"initial_ms"`
	Multiplier *float64 `json:"multiplier"`
	MaxMs      *int64   `json:"max_ms"`
	Jitter     *float64 `json:"jitter"`
}

func (r *redeliveryJSON) request() *topics.RedeliveryRequest {
	if r == nil {
		return nil
	}
	return &topics.RedeliveryRequest{InitialMs: r.InitialMs, Multiplier: r.Multiplier, MaxMs: r.MaxMs, Jitter: r.Jitter}
}

func redeliveryView(p *meta.Redelivery) *redeliveryJSON {
	if p == nil {
		return nil
	}
	return &redeliveryJSON{InitialMs: &p.InitialMs, Multiplier: &p.Multiplier, MaxMs: &p.MaxMs, Jitter: &p.Jitter}
}

// alterRedelivery reads an alter's "redelivery": absent leaves the policy
// alone, null clears it, an object sets it (unknown fields refused).
func alterRedelivery(raw json.RawMessage, req *topics.AlterRequest) error {
	if len(raw) == 0 {
		return nil
	}
	if string(raw) == "null" {
		req.ClearRedelivery = true
		return nil
	}
	var r redeliveryJSON
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return clientErr(http.StatusBadRequest, "invalid json: redelivery: %v", err)
	}
	req.Redelivery = r.request()
	return nil
}
