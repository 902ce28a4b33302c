package remotes

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/domain/remote"
	"github.com/narad/narad/ports"
)

// Report is one member's verdict of the target checks (api.md §2.10.2
// "member report").
type Report struct {
	Node              string
	Result            string // pass or fail
	Class             string // on failure: a link state or a check class
	CredentialVersion int64
	TargetID          string
	TargetServesIDs   bool
	RTTMs             int64
	CertNotAfter      time.Time
	Warnings          []string
	Posture           Posture
	// Capable1000 and Zstd are what the capability probe learned.
	Capable1000 bool
	Zstd        bool
}

// Posture is what a member reports of its own security settings.
type Posture struct {
	SecurityEnabled   bool
	LegacyClusterAuth bool
	RaftTLS           bool
	APIHopEncrypted   bool
}

// LaneCapacityPerS estimates one lane's records per second from the round
// trip (internals.md §7.2): 100,000 / (RTT ms + 5).
func (r Report) LaneCapacityPerS() int64 { return laneCapacityRecordsMs / (r.RTTMs + laneOverheadMs) }

// The lane capacity estimate's constants.
const (
	laneCapacityRecordsMs = 100_000
	laneOverheadMs        = 5
)

// Check results.
const (
	ResultPass = "pass"
	ResultFail = "fail"
)

// target is what the checks learned of the target topic.
type target struct {
	ID       string          `json:"id"`
	Parent   string          `json:"parent"`
	DelayMs  int64           `json:"fanout_delay_ms"`
	Remote   json.RawMessage `json:"remote"`
	Schema   json.RawMessage `json:"schema"`
	Children []string        `json:"children"`
}

// checker runs the checks of internals.md §7.5 from this node with client.
type checker struct {
	client ports.RemoteClient
	topic  string // escaped path segment
	rep    *Report
}

// CheckTarget runs the target checks of internals.md §7.5 from this node
// against topic on r: the dial and TLS, security on at the target, the
// topic usable as a target (compared with source when given), no remote
// child under it, batch produce open to the credential, and no admin
// grant. It never writes on the target.
func (s *Service) CheckTarget(ctx context.Context, r meta.Remote, topic string, source *meta.Topic) Report {
	rep := Report{Node: s.o.Self, Result: ResultFail, CredentialVersion: r.CredentialVersion,
		Posture: Posture{SecurityEnabled: s.cache.d.Secured, RaftTLS: s.o.RaftTLS, APIHopEncrypted: s.o.APIHopEncrypted}}
	client, state := s.cache.Client(r)
	if client == nil {
		rep.Class = state
		return rep
	}
	ctx, cancel := context.WithTimeout(ctx, memberCheckTimeout)
	defer cancel()
	ch := checker{client: client, topic: url.PathEscape(topic), rep: &rep}
	if class := ch.run(ctx, s.sourceFacts(source)); class != "" {
		rep.Class = class
		return rep
	}
	rep.Result = ResultPass
	if !rep.CertNotAfter.IsZero() && rep.CertNotAfter.Before(s.d.Clock.Now().Add(certExpiryWarnAhead)) {
		rep.Warnings = append(rep.Warnings, "the target's server certificate expires within 14 days")
	}
	return rep
}

// sourceFacts is what a check compares the target with: the parent's id
// and schema; zero without a source.
func (s *Service) sourceFacts(source *meta.Topic) *target {
	if source == nil {
		return nil
	}
	t := &target{ID: source.ID}
	if hist, err := s.d.Store.Schemas(source.Name); err == nil && len(hist) > 0 {
		t.Schema = hist[len(hist)-1].Schema
	}
	return t
}

// run returns the failing class, "" when every check passed.
func (ch checker) run(ctx context.Context, source *target) string {
	steps := []func(context.Context, *target) string{ch.securityOn, ch.readTopic, ch.noRemoteChildren, ch.batchProduce, ch.notAdmin, ch.capabilities}
	t := &target{}
	for i, step := range steps {
		if class := step(ctx, t); class != "" {
			return class
		}
		if i == 1 && source != nil {
			if class := compare(t, source); class != "" {
				return class
			}
		}
	}
	return ""
}

// do sends one request and maps a transport failure or an answer that no
// Narad gives to a class.
func (ch checker) do(ctx context.Context, req ports.RemoteRequest) (ports.RemoteAnswer, string) {
	a, err := ch.client.Do(ctx, req)
	switch {
	case errors.Is(err, domain.ErrDestinationRefused):
		return a, "destination_refused"
	case errors.Is(err, domain.ErrRemoteTLS):
		return a, "tls_failed"
	case err != nil:
		return a, "unreachable"
	case a.Status >= 300 && a.Status < 400:
		return a, "redirect_refused"
	}
	if a.ConnectTime > 0 {
		ch.rep.RTTMs = a.ConnectTime.Milliseconds()
	}
	if !a.CertNotAfter.IsZero() {
		ch.rep.CertNotAfter = a.CertNotAfter
	}
	return a, ""
}

// securityOn: the topic without credentials must answer 401.
func (ch checker) securityOn(ctx context.Context, _ *target) string {
	a, class := ch.do(ctx, ports.RemoteRequest{Method: http.MethodGet, Path: "/v1/topics/" + ch.topic, Anonymous: true})
	switch {
	case class != "":
		return class
	case a.Status == http.StatusUnauthorized:
		return ""
	case a.Status == http.StatusOK || a.Status == http.StatusNotFound && remote.IsNarad(a.Body):
		return "target_security_off"
	}
	return answerClass(a)
}

// readTopic reads the target topic with the credential.
func (ch checker) readTopic(ctx context.Context, t *target) string {
	a, class := ch.do(ctx, ports.RemoteRequest{Method: http.MethodGet, Path: "/v1/topics/" + ch.topic})
	if class != "" {
		return class
	}
	if a.Status != http.StatusOK {
		return answerClass(a)
	}
	if err := json.Unmarshal(a.Body, t); err != nil {
		return "edge"
	}
	ch.rep.TargetID, ch.rep.TargetServesIDs = t.ID, t.ID != ""
	switch {
	case len(t.Remote) > 0 && string(t.Remote) != "null":
		return "target_is_stub"
	case t.DelayMs > 0:
		return "target_is_delay_child"
	}
	return ""
}

// compare checks the target against the source: not the source itself,
// the same schema.
func compare(t, source *target) string {
	switch {
	case source.ID != "" && t.ID == source.ID:
		return "target_is_source"
	case !sameJSON(t.Schema, source.Schema):
		return "schema_mismatch"
	}
	return ""
}

// sameJSON compares two schemas, absent and null alike.
func sameJSON(a, b json.RawMessage) bool {
	norm := func(v json.RawMessage) []byte {
		var buf bytes.Buffer
		if len(v) == 0 || json.Compact(&buf, v) != nil || buf.String() == "null" {
			return nil
		}
		return buf.Bytes()
	}
	return bytes.Equal(norm(a), norm(b))
}

// noRemoteChildren: the loop rule (no remote child under the target).
func (ch checker) noRemoteChildren(ctx context.Context, _ *target) string {
	a, class := ch.do(ctx, ports.RemoteRequest{Method: http.MethodGet, Path: "/v1/topics/" + ch.topic + "/children"})
	if class != "" {
		return class
	}
	if a.Status != http.StatusOK {
		return answerClass(a)
	}
	if HasRemoteChild(a.Body) {
		return "target_has_remote_children"
	}
	return ""
}

// HasRemoteChild reports whether a children listing names a remote child.
func HasRemoteChild(listing []byte) bool {
	var l struct {
		Children []struct {
			Remote json.RawMessage `json:"remote"`
		} `json:"children"`
	}
	if json.Unmarshal(listing, &l) != nil {
		return false
	}
	for _, c := range l.Children {
		if len(c.Remote) > 0 && string(c.Remote) != "null" {
			return true
		}
	}
	return false
}

// batchProduce: an empty batch must answer 400 "messages required" (the
// produce grant and the route, writing nothing).
func (ch checker) batchProduce(ctx context.Context, _ *target) string {
	a, class := ch.do(ctx, ports.RemoteRequest{Method: http.MethodPost, Path: "/v1/topics/" + ch.topic + "/produce/batch", Body: []byte(`{"messages":[]}`)})
	switch {
	case class != "":
		return class
	case a.Status == http.StatusBadRequest && strings.Contains(errorOf(a.Body), "messages required"):
		return ""
	case a.Status == http.StatusNotFound && !remote.IsNarad(a.Body):
		return "no_batch_produce"
	}
	return answerClass(a)
}

// notAdmin: the credential must not list the target's users.
func (ch checker) notAdmin(ctx context.Context, _ *target) string {
	a, class := ch.do(ctx, ports.RemoteRequest{Method: http.MethodGet, Path: "/v1/users"})
	switch {
	case class != "":
		return class
	case a.Status == http.StatusOK:
		return "admin_credential"
	case a.Status == http.StatusForbidden:
		return ""
	}
	return answerClass(a)
}

// capabilities probes how many messages a request may carry
// (internals.md §7.2 "Chunks"): the probe every target refuses without
// storing.
func (ch checker) capabilities(ctx context.Context, _ *target) string {
	a, class := ch.do(ctx, ports.RemoteRequest{Method: http.MethodPost, Path: "/v1/topics/" + ch.topic + "/produce/batch", Body: remote.AppendProbe(nil)})
	if class != "" {
		return class
	}
	maxMessages, _ := remote.ProbeCapacity(remote.Answer{Status: a.Status, Body: a.Body})
	ch.rep.Capable1000 = maxMessages >= remote.ChunkMaxMessagesCapable
	return ""
}

// answerClass names the class of an answer no check expected.
func answerClass(a ports.RemoteAnswer) string {
	shaped := remote.IsNarad(a.Body)
	switch {
	case a.Status == http.StatusUnauthorized:
		return "auth_failed"
	case a.Status == http.StatusForbidden && shaped:
		return "forbidden"
	case a.Status == http.StatusNotFound && shaped:
		return "target_missing"
	case a.Status == http.StatusTooManyRequests:
		return "throttled"
	case a.Status >= 500 || a.Status == http.StatusRequestTimeout:
		return "unavailable"
	case !shaped:
		return "edge"
	}
	return "unavailable"
}

// errorOf is a Narad error answer's message, "" for any other body.
func errorOf(body []byte) string {
	msg, _ := remote.NaradError(body)
	return msg
}
