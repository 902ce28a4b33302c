package httpclient_test

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/narad/narad/adapters/httpclient"
)

// checkRequest fails unless rec saw exactly one request with this method,
// escaped path, encoded query ("" for none) and no body.
func checkRequest(t *testing.T, rec *recorder, method, rawPath, query string) {
	t.Helper()
	reqs := rec.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.Method != method || r.RawPath != rawPath || encodeQuery(r.Query) != query || len(r.Body) != 0 {
		t.Fatalf("request %s %s ?%s body %q, want %s %s ?%s without body", r.Method, r.RawPath, encodeQuery(r.Query), r.Body, method, rawPath, query)
	}
	if r.Header.Get("X-Narad-Client") == "" {
		t.Fatal("request without X-Narad-Client")
	}
}

func encodeQuery(q map[string][]string) string {
	var parts []string
	for k, vs := range q {
		for _, v := range vs {
			parts = append(parts, k+"="+v)
		}
	}
	return strings.Join(parts, "&")
}

// ensure that Decommission POSTs to the escaped member path without a body
// and takes the 204.
func TestDecommissionPostsToTheMember(t *testing.T) {
	t.Parallel()
	c, rec := newRecorder(t, "", canned{status: http.StatusNoContent})
	if err := c.Decommission(context.Background(), "narad 3/x"); err != nil {
		t.Fatal(err)
	}
	checkRequest(t, rec, http.MethodPost, "/v1/cluster/members/narad%203%2Fx/decommission", "")
}

// ensure that a 409 listing reasons is a *DecommissionRefused carrying
// every reason, still seen as a 409 by StatusOf.
func TestDecommissionRefusalCarriesTheReasons(t *testing.T) {
	t.Parallel()
	c, _ := newRecorder(t, "", jsonAnswer(http.StatusConflict, `{"error":"narad-3 cannot be decommissioned: a; b","reasons":[{"code":"below_min_voters","message":"a"},{"code":"no_receivers","message":"b"}]}`))
	err := c.Decommission(context.Background(), "narad-3")
	var refused *httpclient.DecommissionRefused
	if !errors.As(err, &refused) {
		t.Fatalf("error %T %v, want *DecommissionRefused", err, err)
	}
	want := []httpclient.Reason{{Code: "below_min_voters", Message: "a"}, {Code: "no_receivers", Message: "b"}}
	if refused.Message != "narad-3 cannot be decommissioned: a; b" || !reflect.DeepEqual(refused.Reasons, want) {
		t.Fatalf("refusal %+v", refused)
	}
	if httpclient.StatusOf(err) != http.StatusConflict {
		t.Fatalf("StatusOf %d", httpclient.StatusOf(err))
	}
	if s := err.Error(); s != "http 409: narad-3 cannot be decommissioned: a; b (reasons: below_min_voters, no_receivers)" {
		t.Fatalf("Error() %q", s)
	}
}

// ensure that other failures of Decommission stay *APIError: a 409 without
// reasons, a plain-text 409, a 404.
func TestDecommissionOtherErrorsStayAPIErrors(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		answer canned
		status int
		msg    string
	}{
		"409_no_reasons": {jsonAnswer(http.StatusConflict, `{"error":"changed"}`), 409, "changed"},
		"409_plain":      {canned{status: http.StatusConflict, body: "conflict text"}, 409, "conflict text"},
		"404":            {jsonAnswer(http.StatusNotFound, `{"error":"not found"}`), 404, "not found"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, _ := newRecorder(t, "", tc.answer)
			err := c.Decommission(context.Background(), "n9")
			var refused *httpclient.DecommissionRefused
			var ae *httpclient.APIError
			if errors.As(err, &refused) || !errors.As(err, &ae) || ae.Status != tc.status || ae.Message != tc.msg {
				t.Fatalf("error %T %v", err, err)
			}
		})
	}
}

// ensure that DecommissionDryRun POSTs with dry_run=true and decodes the
// verdict, and that a verdict that is not JSON is ErrMalformedReply.
func TestDecommissionDryRunReadsTheVerdict(t *testing.T) {
	t.Parallel()
	c, rec := newRecorder(t, "", jsonAnswer(http.StatusOK, `{"member":"narad-3","would_decommission":false,"reasons":[{"code":"below_min_voters","message":"m"}],"voter":true,"owned_partitions":4,"inbound_moves":1}`))
	v, err := c.DecommissionDryRun(context.Background(), "narad-3")
	if err != nil {
		t.Fatal(err)
	}
	want := httpclient.DecommissionVerdict{Member: "narad-3", Reasons: []httpclient.Reason{{Code: "below_min_voters", Message: "m"}}, Voter: true, OwnedPartitions: 4, InboundMoves: 1}
	if !reflect.DeepEqual(v, want) {
		t.Fatalf("verdict %+v", v)
	}
	checkRequest(t, rec, http.MethodPost, "/v1/cluster/members/narad-3/decommission", "dry_run=true")

	c, _ = newRecorder(t, "", canned{status: http.StatusOK, body: "yes"})
	if _, err := c.DecommissionDryRun(context.Background(), "narad-3"); !errors.Is(err, httpclient.ErrMalformedReply) {
		t.Fatalf("error %v, want ErrMalformedReply", err)
	}
}

// ensure that CancelDecommission DELETEs the member's decommission.
func TestCancelDecommissionDeletes(t *testing.T) {
	t.Parallel()
	c, rec := newRecorder(t, "", canned{status: http.StatusNoContent})
	if err := c.CancelDecommission(context.Background(), "n 1"); err != nil {
		t.Fatal(err)
	}
	checkRequest(t, rec, http.MethodDelete, "/v1/cluster/members/n%201/decommission", "")

	c, _ = newRecorder(t, "", jsonAnswer(http.StatusNotFound, `{"error":"not found"}`))
	if err := c.CancelDecommission(context.Background(), "n9"); httpclient.StatusOf(err) != http.StatusNotFound {
		t.Fatalf("error %v, want a 404", err)
	}
}

// ensure that ForgetMember POSTs to the escaped forget path and decodes the answer.
func TestForgetMemberReadsTheAnswer(t *testing.T) {
	t.Parallel()
	c, rec := newRecorder(t, "", jsonAnswer(http.StatusOK, `{"id":"narad/3","voter":true}`))
	f, err := c.ForgetMember(context.Background(), "narad/3")
	if err != nil {
		t.Fatal(err)
	}
	if f != (httpclient.Forgotten{ID: "narad/3", Voter: true}) {
		t.Fatalf("answer %+v", f)
	}
	checkRequest(t, rec, http.MethodPost, "/v1/cluster/members/narad%2F3/forget", "")
}

// ensure that Moves asks for the worker reports only with detail, and
// decodes them.
func TestMovesReadsTheListing(t *testing.T) {
	t.Parallel()
	plain := `{"moves":[{"topic":"t","partition":1,"from":"n1","to":"n2","from_status":"alive","to_status":"dead","blocked":"target_dead"}]}`
	c, rec := newRecorder(t, "", jsonAnswer(http.StatusOK, plain))
	got, err := c.Moves(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	want := httpclient.Move{Topic: "t", Partition: 1, From: "n1", To: "n2", FromStatus: "alive", ToStatus: "dead", Blocked: "target_dead"}
	if len(got) != 1 || !reflect.DeepEqual(got[0], want) {
		t.Fatalf("moves %+v", got)
	}
	checkRequest(t, rec, http.MethodGet, "/v1/cluster/moves", "")

	detail := `{"moves":[{"topic":"t","partition":1,"from":"n1","to":"n2","from_status":"alive","to_status":"alive","worker":{"topic":"t","partition":1,"source":"n1","target":"n2","started_at":"2026-12-04T09:45:22Z","phase":"copying","attempts":2,"last_error":"reset","copied_bytes":1536,"blocked":"copy_unverifiable"}},` +
		`{"topic":"u","partition":0,"from":"n1","to":"n3","from_status":"alive","to_status":"alive","worker_error":"timeout"}]}`
	c, rec = newRecorder(t, "", jsonAnswer(http.StatusOK, detail))
	got, err = c.Moves(context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	w := &httpclient.MoveWorker{Topic: "t", Partition: 1, Source: "n1", Target: "n2", StartedAt: "2026-12-04T09:45:22Z", Phase: "copying", Attempts: 2, LastError: "reset", CopiedBytes: 1536, Blocked: "copy_unverifiable"}
	if len(got) != 2 || !reflect.DeepEqual(got[0].Worker, w) || got[1].Worker != nil || got[1].WorkerError != "timeout" {
		t.Fatalf("moves %+v", got)
	}
	checkRequest(t, rec, http.MethodGet, "/v1/cluster/moves", "detail=true")
}

// ensure that AbortMove POSTs to the escaped move path, sends target only
// when given, and decodes the 202.
func TestAbortMoveReadsTheAnswer(t *testing.T) {
	t.Parallel()
	answer := jsonAnswer(http.StatusAccepted, `{"move":{"topic":"a/b","partition":3,"from":"n1","to":"n2","from_status":"alive","to_status":"alive"},"note":"n1 keeps it"}`)
	for _, target := range []string{"", "n2"} {
		c, rec := newRecorder(t, "", answer)
		a, err := c.AbortMove(context.Background(), "a/b", 3, target)
		if err != nil {
			t.Fatal(err)
		}
		want := httpclient.AbortedMove{Move: httpclient.Move{Topic: "a/b", Partition: 3, From: "n1", To: "n2", FromStatus: "alive", ToStatus: "alive"}, Note: "n1 keeps it"}
		if !reflect.DeepEqual(a, want) {
			t.Fatalf("answer %+v", a)
		}
		query := ""
		if target != "" {
			query = "target=" + target
		}
		checkRequest(t, rec, http.MethodPost, "/v1/cluster/moves/a%2Fb/3/abort", query)
	}

	c, _ := newRecorder(t, "", jsonAnswer(http.StatusConflict, `{"error":"the move now targets n3"}`))
	if _, err := c.AbortMove(context.Background(), "t", 0, "n2"); httpclient.StatusOf(err) != http.StatusConflict || !strings.Contains(err.Error(), "the move now targets n3") {
		t.Fatalf("error %v, want the 409", err)
	}
}
