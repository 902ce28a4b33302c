package httpclient_test

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"testing"

	"github.com/narad/narad/adapters/httpclient"
)

// remoteJSON is a remote object as api.md §2.18 shows it.
const remoteJSON = `{"name":"eu","id":"r1","url":"https://eu.example.com","username":"replicator",` +
	`"password":{"fingerprint":"fp1","set_at":"2026-11-02T10:00:00Z","set_by":"admin","key_version":"k1"},"credential_version":3,` +
	`"limits":{"max_in_flight":16,"request_timeout_ms":30000,"idle_conn_timeout_ms":30000,"conn_max_age_ms":300000,"check_interval_ms":60000,"compression":"none"},` +
	`"revision":7,"created_at":"2026-11-01T09:00:00Z","created_by":"admin","links":["orders/orders-eu"],"nodes":[{"node":"n1","state":"ready","credential_version":3,"fingerprint":"fp1","last_error":"none"}]}`

// stubJSON is a remote child's stub as api.md §2.10.2 shows it.
const stubJSON = `{"name":"orders-eu","partitions":0,"retention_ms":0,"visibility_timeout_ms":0,"max_in_flight_per_partition":0,"max_acked_ahead_per_partition":0,"created_at":1,"role":"child","parent":"orders","remote":{"name":"eu","topic":"orders"}}`

// sentCase is one client call and the one request it must send.
type sentCase struct {
	answer  canned
	call    func(c *httpclient.Client) error
	method  string
	rawPath string
	query   string // encoded, "" for none
	body    string // exact, "" for none
}

// ensure that every remote call sends exactly its route's request: method,
// escaped path, query only when asked, and a body with only the fields set.
func TestRemoteCallsSendTheirRequests(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ok := func(body string) canned { return jsonAnswer(http.StatusOK, body) }
	timeout, compression := int64(10000), "zstd"
	cases := map[string]sentCase{
		"create_minimal": {jsonAnswer(http.StatusCreated, remoteJSON), func(c *httpclient.Client) error {
			_, err := c.CreateRemote(ctx, httpclient.NewRemote{Name: "eu", URL: "https://eu.example.com", Username: "replicator", Password: "pw-24-bytes-long-enough!"})
			return err
		}, "POST", "/v1/remotes", "", `{"name":"eu","url":"https://eu.example.com","username":"replicator","password":"pw-24-bytes-long-enough!"}`},
		"create_with_ca_and_limits": {jsonAnswer(http.StatusCreated, remoteJSON), func(c *httpclient.Client) error {
			_, err := c.CreateRemote(ctx, httpclient.NewRemote{Name: "eu", URL: "https://x", Username: "u", Password: "p", CAPEM: "PEM",
				Limits: &httpclient.RemoteLimitsChange{RequestTimeoutMs: &timeout, Compression: &compression}})
			return err
		}, "POST", "/v1/remotes", "", `{"name":"eu","url":"https://x","username":"u","password":"p","ca_pem":"PEM","limits":{"request_timeout_ms":10000,"compression":"zstd"}}`},
		"update_back_to_system_roots": {ok(remoteJSON), func(c *httpclient.Client) error {
			pw, none := "p", ""
			_, err := c.UpdateRemote(ctx, "eu/1", httpclient.RemoteChange{Password: &pw, CAPEM: &none})
			return err
		}, "PATCH", "/v1/remotes/eu%2F1", "", `{"password":"p","ca_pem":""}`},
		"delete":       {canned{status: http.StatusNoContent}, func(c *httpclient.Client) error { return c.DeleteRemote(ctx, "eu", false) }, "DELETE", "/v1/remotes/eu", "", ""},
		"delete_force": {canned{status: http.StatusNoContent}, func(c *httpclient.Client) error { return c.DeleteRemote(ctx, "eu", true) }, "DELETE", "/v1/remotes/eu", "force=true", ""},
		"list":         {ok(`{"allowlist":"none","remotes":[]}`), func(c *httpclient.Client) error { _, err := c.ListRemotes(ctx, true); return err }, "GET", "/v1/remotes", "", ""},
		"list_no_nodes": {ok(`{"allowlist":"none","remotes":[]}`), func(c *httpclient.Client) error { _, err := c.ListRemotes(ctx, false); return err },
			"GET", "/v1/remotes", "nodes=false", ""},
		"get": {ok(remoteJSON), func(c *httpclient.Client) error { _, err := c.GetRemote(ctx, "eu", false); return err }, "GET", "/v1/remotes/eu", "nodes=false", ""},
		"test": {ok(`{"remote":"eu","result":"pass","checks":[]}`), func(c *httpclient.Client) error {
			_, err := c.TestRemote(ctx, "eu", httpclient.RemoteTestSpec{Topic: "orders"})
			return err
		}, "POST", "/v1/remotes/eu/test", "", `{"topic":"orders"}`},
		"reencrypt": {ok(`{"key_version":"k2","reencrypted":[],"already_current":[],"failed":[]}`), func(c *httpclient.Client) error { _, err := c.ReencryptRemotes(ctx); return err },
			"POST", "/v1/cluster/reencrypt-remotes", "", `{}`},
		"attach_local": {ok(`{"name":"orders","role":"parent"}`), func(c *httpclient.Client) error { _, err := c.AttachChild(ctx, "orders", "late", 90000); return err },
			"POST", "/v1/topics/orders/children", "", `{"child":"late","delay_ms":90000}`},
		"attach_remote": {jsonAnswer(http.StatusCreated, stubJSON), func(c *httpclient.Client) error {
			_, err := c.AttachRemoteChild(ctx, "orders", httpclient.RemoteAttach{Child: "orders-eu", Remote: "eu", From: "earliest", Lanes: 4})
			return err
		}, "POST", "/v1/topics/orders/children", "", `{"child":"orders-eu","remote":"eu","from":"earliest","lanes":4}`},
		"detach":       {canned{status: http.StatusNoContent}, func(c *httpclient.Client) error { return c.DetachChild(ctx, "a/b", "c d", false) }, "DELETE", "/v1/topics/a%2Fb/children/c%20d", "", ""},
		"detach_force": {canned{status: http.StatusNoContent}, func(c *httpclient.Client) error { return c.DetachChild(ctx, "orders", "orders-eu", true) }, "DELETE", "/v1/topics/orders/children/orders-eu", "force=true", ""},
		"pause": {ok(stubJSON), func(c *httpclient.Client) error {
			_, err := c.PauseRemoteChild(ctx, "orders", "orders-eu", "maintenance")
			return err
		}, "POST", "/v1/topics/orders/children/orders-eu/pause", "", `{"reason":"maintenance"}`},
		"pause_no_reason": {ok(stubJSON), func(c *httpclient.Client) error {
			_, err := c.PauseRemoteChild(ctx, "orders", "orders-eu", "")
			return err
		},
			"POST", "/v1/topics/orders/children/orders-eu/pause", "", `{}`},
		"resume": {ok(stubJSON), func(c *httpclient.Client) error {
			_, err := c.ResumeRemoteChild(ctx, "orders", "orders-eu", false)
			return err
		},
			"POST", "/v1/topics/orders/children/orders-eu/resume", "", `{"accept_target":false}`},
		"resume_accept": {ok(stubJSON), func(c *httpclient.Client) error {
			_, err := c.ResumeRemoteChild(ctx, "orders", "orders-eu", true)
			return err
		},
			"POST", "/v1/topics/orders/children/orders-eu/resume", "", `{"accept_target":true}`},
		"skip": {ok(stubJSON), func(c *httpclient.Client) error {
			_, err := c.SkipRemoteChild(ctx, "orders", "orders-eu", 0, 7)
			return err
		},
			"POST", "/v1/topics/orders/children/orders-eu/skip", "", `{"partition":0,"offset":7}`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, rec := newRecorder(t, "admin", tc.answer)
			if err := tc.call(c); err != nil {
				t.Fatal(err)
			}
			reqs := rec.requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests, want 1", len(reqs))
			}
			r := reqs[0]
			if r.Method != tc.method || r.RawPath != tc.rawPath || encodeQuery(r.Query) != tc.query || string(r.Body) != tc.body {
				t.Fatalf("sent %s %s ?%s %s\nwant %s %s ?%s %s", r.Method, r.RawPath, encodeQuery(r.Query), r.Body, tc.method, tc.rawPath, tc.query, tc.body)
			}
			if tc.body != "" && r.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("Content-Type %q", r.Header.Get("Content-Type"))
			}
		})
	}
}

// ensure that the remote object and the listing decode with every field.
func TestRemoteObjectsDecode(t *testing.T) {
	t.Parallel()
	c, _ := newRecorder(t, "", jsonAnswer(http.StatusOK, `{"allowlist":"set","key":{"key_version":"k1","first_sealed_at":"2026-11-01T09:00:00Z","age_seconds":86400},"remotes":[`+remoteJSON+`],"lingering":["old"],"not_answering":["n3"]}`))
	list, err := c.ListRemotes(context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	want := httpclient.Remote{Name: "eu", ID: "r1", URL: "https://eu.example.com", Username: "replicator",
		Password:          httpclient.RemotePassword{Fingerprint: "fp1", SetAt: "2026-11-02T10:00:00Z", SetBy: "admin", KeyVersion: "k1"},
		CredentialVersion: 3, Limits: httpclient.RemoteLimits{MaxInFlight: 16, RequestTimeoutMs: 30000, IdleConnTimeoutMs: 30000, ConnMaxAgeMs: 300000, CheckIntervalMs: 60000, Compression: "none"},
		Revision: 7, CreatedAt: "2026-11-01T09:00:00Z", CreatedBy: "admin", Links: []string{"orders/orders-eu"},
		Nodes: []httpclient.RemoteNode{{Node: "n1", State: "ready", CredentialVersion: 3, Fingerprint: "fp1", LastError: "none"}}}
	if list.Allowlist != "set" || list.Key == nil || list.Key.AgeSeconds != 86400 || len(list.Remotes) != 1 || !reflect.DeepEqual(list.Remotes[0], want) ||
		!reflect.DeepEqual(list.Lingering, []string{"old"}) || !reflect.DeepEqual(list.NotAnswering, []string{"n3"}) {
		t.Fatalf("listing %+v", list)
	}
}

// ensure that a remote attach tells the stub (201) from the dry run's
// report (200), and that a status that does not fit dry_run is malformed.
func TestAttachRemoteChildReadsStubOrReport(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, _ := newRecorder(t, "", jsonAnswer(http.StatusCreated, `{"name":"orders-eu","role":"child","parent":"orders","warnings":["short retention"]}`))
	res, err := c.AttachRemoteChild(ctx, "orders", httpclient.RemoteAttach{Child: "orders-eu", Remote: "eu"})
	if err != nil || res.DryRun != nil || res.Created == nil || res.Created.Name != "orders-eu" || !reflect.DeepEqual(res.Created.Warnings, []string{"short retention"}) {
		t.Fatalf("result %+v, err %v", res, err)
	}
	report := `{"dry_run":true,"attach_offsets":[5,9],"checks":[{"node":"n1","result":"pass","credential_version":3,"target_serves_ids":true,"rtt_ms":12,"lane_capacity_per_s":800,"warnings":[]}],"warnings":[],"capabilities":{"max_messages":1000,"zstd":true}}`
	c, rec := newRecorder(t, "", jsonAnswer(http.StatusOK, report))
	res, err = c.AttachRemoteChild(ctx, "orders", httpclient.RemoteAttach{Child: "orders-eu", Remote: "eu", DryRun: true})
	if err != nil || res.Created != nil || res.DryRun == nil || !reflect.DeepEqual(res.DryRun.AttachOffsets, []int64{5, 9}) ||
		len(res.DryRun.Checks) != 1 || res.DryRun.Checks[0].RTTMs != 12 || res.DryRun.Capabilities == nil || !res.DryRun.Capabilities.Zstd {
		t.Fatalf("result %+v, err %v", res, err)
	}
	if body := string(rec.requests()[0].Body); body != `{"child":"orders-eu","remote":"eu","dry_run":true}` {
		t.Fatalf("body %s", body)
	}
	c, _ = newRecorder(t, "", jsonAnswer(http.StatusOK, report))
	if _, err := c.AttachRemoteChild(ctx, "orders", httpclient.RemoteAttach{Child: "orders-eu", Remote: "eu"}); !errors.Is(err, httpclient.ErrMalformedReply) {
		t.Fatalf("200 without dry_run: error %v, want ErrMalformedReply", err)
	}
}

// ensure that error answers carrying details become a *RemoteRefusal that
// still reports its status and message, and that plain ones stay *APIError.
func TestRemoteRefusalsCarryTheirDetails(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, _ := newRecorder(t, "", jsonAnswer(http.StatusConflict, `{"error":"remote is used by 1 remote children","links":["orders/orders-eu"]}`))
	err := c.DeleteRemote(ctx, "eu", false)
	var r *httpclient.RemoteRefusal
	if !errors.As(err, &r) || !reflect.DeepEqual(r.Links, []string{"orders/orders-eu"}) || httpclient.StatusOf(err) != 409 || err.Error() != "http 409: remote is used by 1 remote children" {
		t.Fatalf("error %T %v", err, err)
	}
	c, _ = newRecorder(t, "", jsonAnswer(http.StatusConflict, `{"error":"remote child \"orders-eu\" has unshipped records","lag_messages":42,"lag_complete":false,"dispatch_backlog":{"n2":5}}`))
	err = c.DetachChild(ctx, "orders", "orders-eu", false)
	if !errors.As(err, &r) || r.LagMessages == nil || *r.LagMessages != 42 || r.LagComplete || r.DispatchBacklog["n2"] != 5 {
		t.Fatalf("error %T %v", err, err)
	}
	c, _ = newRecorder(t, "", jsonAnswer(http.StatusConflict, `{"error":"not stuck there","blocked_at":{"partition":0,"offset":9,"state":"rejected_record"}}`))
	_, err = c.SkipRemoteChild(ctx, "orders", "orders-eu", 0, 7)
	if !errors.As(err, &r) || *r.BlockedAt != (httpclient.BlockedAt{Partition: 0, Offset: 9, State: "rejected_record"}) {
		t.Fatalf("error %T %v", err, err)
	}
	c, _ = newRecorder(t, "", jsonAnswer(http.StatusBadRequest, `{"error":"url must be https"}`))
	_, err = c.CreateRemote(ctx, httpclient.NewRemote{Name: "eu"})
	var ae *httpclient.APIError
	if errors.As(err, &r) || !errors.As(err, &ae) || ae.Message != "url must be https" {
		t.Fatalf("error %T %v", err, err)
	}
}

// ensure that a remote name that cannot be a path segment is refused
// before any request, and a test verdict other than pass/fail is malformed.
func TestRemoteNameAndVerdictChecks(t *testing.T) {
	t.Parallel()
	c, rec := newRecorder(t, "", jsonAnswer(http.StatusOK, `{"remote":"eu","result":"maybe","checks":[]}`))
	for _, name := range []string{"", ".", ".."} {
		if err := c.DeleteRemote(context.Background(), name, false); !errors.Is(err, httpclient.ErrBadRemoteName) {
			t.Fatalf("name %q: error %v", name, err)
		}
	}
	if len(rec.requests()) != 0 {
		t.Fatal("a bad name was sent")
	}
	if _, err := c.TestRemote(context.Background(), "eu", httpclient.RemoteTestSpec{Topic: "t"}); !errors.Is(err, httpclient.ErrMalformedReply) {
		t.Fatalf("error %v, want ErrMalformedReply", err)
	}
}
