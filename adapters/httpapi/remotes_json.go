package httpapi

import (
	"errors"
	"net/http"
	"time"

	"github.com/narad/narad/application/remotes"
)

// remoteLimitsBody is a request's limits: absent fields keep their value.
type remoteLimitsBody struct {
	MaxInFlight       *int32  `json:"max_in_flight"`
	RequestTimeoutMs  *int64  `json:"request_timeout_ms"`
	IdleConnTimeoutMs *int64  `json:"idle_conn_timeout_ms"`
	ConnMaxAgeMs      *int64  `json:"conn_max_age_ms"`
	CheckIntervalMs   *int64  `json:"check_interval_ms"`
	Compression       *string `json:"compression"`
}

func (l *remoteLimitsBody) patch() remotes.LimitsPatch {
	if l == nil {
		return remotes.LimitsPatch{}
	}
	return remotes.LimitsPatch{MaxInFlight: l.MaxInFlight, RequestTimeoutMs: l.RequestTimeoutMs, IdleConnTimeoutMs: l.IdleConnTimeoutMs,
		ConnMaxAgeMs: l.ConnMaxAgeMs, CheckIntervalMs: l.CheckIntervalMs, Compression: l.Compression}
}

// remoteCreateBody is POST /v1/remotes.
type remoteCreateBody struct {
	Name     *string           `json:"name"`
	URL      *string           `json:"url"`
	Username *string           `json:"username"`
	Password *string           `json:"password"`
	CAPEM    *string           `json:"ca_pem"`
	Limits   *remoteLimitsBody `json:"limits"`
}

func (b remoteCreateBody) request() (remotes.CreateRequest, error) {
	for _, f := range []struct {
		name string
		v    *string
	}{{"name", b.Name}, {"url", b.URL}, {"username", b.Username}, {"password", b.Password}} {
		if f.v == nil {
			return remotes.CreateRequest{}, clientErr(http.StatusBadRequest, "%s required", f.name)
		}
	}
	req := remotes.CreateRequest{Name: *b.Name, URL: *b.URL, Username: *b.Username, Password: []byte(*b.Password), Limits: b.Limits.patch()}
	if b.CAPEM != nil {
		req.CAPEM = *b.CAPEM
	}
	return req, nil
}

// remotePatchBody is PATCH /v1/remotes/{name}.
type remotePatchBody struct {
	URL      *string           `json:"url"`
	Username *string           `json:"username"`
	Password *string           `json:"password"`
	CAPEM    *string           `json:"ca_pem"`
	Limits   *remoteLimitsBody `json:"limits"`
}

func (b remotePatchBody) request() (remotes.UpdateRequest, error) {
	req := remotes.UpdateRequest{URL: b.URL, Username: b.Username, CAPEM: b.CAPEM, Limits: b.Limits.patch()}
	if b.Password != nil {
		req.Password = []byte(*b.Password)
	}
	if b.Limits != nil && b.Limits.Compression != nil && *b.Limits.Compression == "" {
		return req, clientErr(http.StatusBadRequest, "limits.compression must be none or zstd")
	}
	return req, nil
}

type remotePasswordJSON struct {
	Fingerprint string `json:"fingerprint"`
	SetAt       string `json:"set_at"`
	SetBy       string `json:"set_by"`
	KeyVersion  string `json:"key_version"`
}

type remoteLimitsJSON struct {
	MaxInFlight       int32  `json:"max_in_flight"`
	RequestTimeoutMs  int64  `json:"request_timeout_ms"`
	IdleConnTimeoutMs int64  `json:"idle_conn_timeout_ms"`
	ConnMaxAgeMs      int64  `json:"conn_max_age_ms"`
	CheckIntervalMs   int64  `json:"check_interval_ms"`
	Compression       string `json:"compression"`
}

type remoteNodeJSON struct {
	Node              string `json:"node"`
	State             string `json:"state"`
	CredentialVersion int64  `json:"credential_version,omitempty"`
	KeyVersion        string `json:"key_version,omitempty"`
	Fingerprint       string `json:"fingerprint,omitempty"`
	LastOKAt          string `json:"last_ok_at,omitempty"`
	LastError         string `json:"last_error"`
}

// remoteJSON is the remote object (api.md §2.18); it never holds the
// password.
type remoteJSON struct {
	Name              string             `json:"name"`
	ID                string             `json:"id"`
	URL               string             `json:"url"`
	Username          string             `json:"username"`
	Password          remotePasswordJSON `json:"password"`
	CredentialVersion int64              `json:"credential_version"`
	CASHA512          string             `json:"ca_pem_sha512,omitempty"`
	Limits            remoteLimitsJSON   `json:"limits"`
	Revision          int64              `json:"revision"`
	CreatedAt         string             `json:"created_at"`
	CreatedBy         string             `json:"created_by"`
	Links             *[]string          `json:"links,omitempty"`
	Nodes             []remoteNodeJSON   `json:"nodes,omitempty"`
}

func rfc3339Ms(ms int64) string {
	if ms == 0 {
		return ""
	}
	return time.UnixMilli(ms).UTC().Format(time.RFC3339)
}

func remoteView(v remotes.View) remoteJSON {
	r := v.Remote
	out := remoteJSON{Name: r.Name, ID: r.ID, URL: r.URL, Username: r.Username,
		Password:          remotePasswordJSON{Fingerprint: r.Fingerprint, SetAt: rfc3339Ms(r.SetAtMs), SetBy: r.SetBy, KeyVersion: r.KeyVersion},
		CredentialVersion: r.CredentialVersion, CASHA512: caSHA512(r.CAPEM),
		Limits: remoteLimitsJSON{MaxInFlight: r.Limits.MaxInFlight, RequestTimeoutMs: r.Limits.RequestTimeoutMs,
			IdleConnTimeoutMs: r.Limits.IdleConnTimeoutMs, ConnMaxAgeMs: r.Limits.ConnMaxAgeMs,
			CheckIntervalMs: r.Limits.CheckIntervalMs, Compression: r.Limits.Compression},
		Revision: r.Revision, CreatedAt: rfc3339Ms(r.CreatedAtMs), CreatedBy: r.CreatedBy}
	if v.Links != nil { // reads list the links, even none; a write's answer leaves them out
		out.Links = &v.Links
	}
	for _, n := range v.Nodes {
		out.Nodes = append(out.Nodes, remoteNodeJSON{Node: n.Node, State: n.State, CredentialVersion: n.CredentialVersion,
			KeyVersion: n.KeyVersion, Fingerprint: n.Fingerprint, LastOKAt: rfc3339Ms(n.LastOKAtMs), LastError: n.LastError})
	}
	return out
}

func listingView(l remotes.Listing) map[string]any {
	notAnswering := l.NotAnswering
	if notAnswering == nil {
		notAnswering = []string{}
	}
	lingering := make([]string, 0, len(l.Lingering)) // deleted remotes a member still holds, by name
	for _, g := range l.Lingering {
		lingering = append(lingering, g.Name)
	}
	out := map[string]any{"allowlist": "none", "lingering": lingering, "not_answering": notAnswering}
	if l.AllowlistSet {
		out["allowlist"] = "set"
	}
	if l.KeyVersion != "" && len(l.Remotes) > 0 {
		out["key"] = map[string]any{"key_version": l.KeyVersion, "first_sealed_at": rfc3339Ms(l.KeyFirstSealedAtMs),
			"age_seconds": max(0, (l.AtMs-l.KeyFirstSealedAtMs)/1000)}
	}
	views := make([]remoteJSON, 0, len(l.Remotes))
	for _, v := range l.Remotes {
		views = append(views, remoteView(v))
	}
	out["remotes"] = views
	return out
}

// reportJSON is a member report (api.md §2.10.2).
type reportJSON struct {
	Node               string      `json:"node"`
	Result             string      `json:"result"`
	Class              string      `json:"class,omitempty"`
	CredentialVersion  int64       `json:"credential_version"`
	TargetID           string      `json:"target_id,omitempty"`
	TargetServesIDs    bool        `json:"target_serves_ids"`
	RTTMs              int64       `json:"rtt_ms"`
	LaneCapacityPerS   int64       `json:"lane_capacity_per_s"`
	ServerCertNotAfter string      `json:"server_cert_not_after,omitempty"`
	Warnings           []string    `json:"warnings"`
	Posture            postureJSON `json:"posture"`
}

type postureJSON struct {
	SecurityEnabled   bool `json:"security_enabled"`
	LegacyClusterAuth bool `json:"legacy_cluster_auth"`
	RaftTLS           bool `json:"raft_tls"`
	APIHopEncrypted   bool `json:"api_hop_encrypted"`
}

func reportView(r remotes.Report) reportJSON {
	out := reportJSON{Node: r.Node, Result: r.Result, Class: r.Class, CredentialVersion: r.CredentialVersion, TargetID: r.TargetID,
		TargetServesIDs: r.TargetServesIDs, RTTMs: r.RTTMs, Warnings: r.Warnings,
		Posture: postureJSON{SecurityEnabled: r.Posture.SecurityEnabled, LegacyClusterAuth: r.Posture.LegacyClusterAuth,
			RaftTLS: r.Posture.RaftTLS, APIHopEncrypted: r.Posture.APIHopEncrypted}}
	if !r.CertNotAfter.IsZero() {
		out.ServerCertNotAfter = r.CertNotAfter.UTC().Format(time.RFC3339)
	}
	if r.RTTMs > 0 { // no connection, no estimate
		out.LaneCapacityPerS = r.LaneCapacityPerS()
	}
	if out.Warnings == nil {
		out.Warnings = []string{}
	}
	return out
}

func testView(t remotes.TestResult) map[string]any {
	checks := make([]reportJSON, 0, len(t.Checks))
	for _, r := range t.Checks {
		checks = append(checks, reportView(r))
	}
	out := map[string]any{"remote": t.Remote, "result": t.Result, "checks": checks}
	if t.Class != "" {
		out["class"] = t.Class
	}
	return out
}

func asInUse(err error, target **remotes.InUseError) bool { return errors.As(err, target) }
