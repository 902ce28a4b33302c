package httpclient_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/narad/narad/adapters/httpclient"
)

const redriveJob = `{"id":"00112233aabbccdd","to":"orders","rate_per_sec":0,"max_messages":5,"state":"running","moved":3,"skipped":1,"error":"produce to orders: boom","started_by":"ops","started_at_ms":1783615560000,"updated_at_ms":1783615565000}`

// ensure that a start sends only the options that are set, the rate
// also when it is 0 (unlimited), and decodes the job.
func TestStartRedriveSendsOnlySetOptions(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		o    httpclient.RedriveOptions
		want string
	}{
		"defaults":  {want: `{}`},
		"unlimited": {o: httpclient.RedriveOptions{Rate: ptr(0)}, want: `{"rate_per_sec":0}`},
		"every_one": {o: httpclient.RedriveOptions{To: "orders", Rate: ptr(250), Max: 5}, want: `{"to":"orders","rate_per_sec":250,"max_messages":5}`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, rec := newRecorder(t, "", jsonAnswer(202, redriveJob))
			got, err := c.StartRedrive(context.Background(), "orders dlq", tc.o)
			if err != nil {
				t.Fatal(err)
			}
			r := rec.requests()[0]
			if r.Method != http.MethodPost || r.RawPath != "/v1/topics/orders%20dlq/redrive" || r.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("request %s %s %q", r.Method, r.RawPath, r.Header.Get("Content-Type"))
			}
			if string(r.Body) != tc.want {
				t.Fatalf("body %s, want %s", r.Body, tc.want)
			}
			want := httpclient.Redrive{ID: "00112233aabbccdd", To: "orders", MaxMessages: 5, State: httpclient.RedriveRunning, Moved: 3, Skipped: 1,
				Error: "produce to orders: boom", StartedBy: "ops", StartedAtMs: 1783615560000, UpdatedAtMs: 1783615565000}
			if got != want || !got.Running() {
				t.Fatalf("job %+v\nwant %+v", got, want)
			}
		})
	}
}

// ensure that the status and the cancel use GET and DELETE without a
// body and decode the job.
func TestRedriveStatusAndCancel(t *testing.T) {
	t.Parallel()
	c, rec := newRecorder(t, "", jsonAnswer(200, redriveJob), jsonAnswer(200, `{"id":"00112233aabbccdd","rate_per_sec":100,"max_messages":0,"state":"cancelled","moved":7,"skipped":0,"started_at_ms":1,"updated_at_ms":2}`))
	j, err := c.Redrive(context.Background(), "dlq")
	if err != nil || j.Moved != 3 || j.To != "orders" {
		t.Fatalf("status %+v %v", j, err)
	}
	j, err = c.CancelRedrive(context.Background(), "dlq")
	if err != nil || j.State != httpclient.RedriveCancelled || j.Running() || j.Moved != 7 || j.To != "" || j.RatePerSec != 100 {
		t.Fatalf("cancel %+v %v", j, err)
	}
	reqs := rec.requests()
	for i, m := range []string{http.MethodGet, http.MethodDelete} {
		if r := reqs[i]; r.Method != m || r.Path != "/v1/topics/dlq/redrive" || len(r.Body) != 0 {
			t.Fatalf("request %d: %s %s body %q", i, r.Method, r.Path, r.Body)
		}
	}
}

// ensure that refusals surface as *APIError with the server's status and
// message, and that an answer that is not a job is a malformed reply.
func TestRedriveErrors(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		answer canned
		call   func(*httpclient.Client) error
		status int
		want   string
	}{
		"start_conflict": {answer: jsonAnswer(409, `{"error":"topic \"dlq\" already runs redrive 00112233aabbccdd; cancel it first"}`),
			call: func(c *httpclient.Client) error {
				_, err := c.StartRedrive(context.Background(), "dlq", httpclient.RedriveOptions{})
				return err
			},
			status: 409, want: `http 409: topic "dlq" already runs redrive 00112233aabbccdd; cancel it first`},
		"no_job": {answer: jsonAnswer(404, `{"error":"no redrive job on this topic"}`),
			call: func(c *httpclient.Client) error {
				_, err := c.Redrive(context.Background(), "dlq")
				return err
			},
			status: 404, want: "http 404: no redrive job on this topic"},
		"none_runs": {answer: jsonAnswer(409, `{"error":"topic \"dlq\" runs no redrive job"}`),
			call: func(c *httpclient.Client) error {
				_, err := c.CancelRedrive(context.Background(), "dlq")
				return err
			},
			status: 409, want: `http 409: topic "dlq" runs no redrive job`},
		"not_a_job": {answer: jsonAnswer(200, `{}`),
			call: func(c *httpclient.Client) error {
				_, err := c.Redrive(context.Background(), "dlq")
				return err
			}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, _ := newRecorder(t, "", tc.answer)
			err := tc.call(c)
			if tc.status == 0 {
				if !errors.Is(err, httpclient.ErrMalformedReply) {
					t.Fatalf("err %v, want a malformed reply", err)
				}
				return
			}
			if httpclient.StatusOf(err) != tc.status || err.Error() != tc.want {
				t.Fatalf("err %v (status %d), want %q", err, httpclient.StatusOf(err), tc.want)
			}
		})
	}
}

// ensure that the topic object carries the last job, and nothing when
// none was started.
func TestTopicCarriesRedrive(t *testing.T) {
	t.Parallel()
	c, _ := newRecorder(t, "", jsonAnswer(200, `{"name":"dlq","partitions":3,"redrive":`+redriveJob+`}`), jsonAnswer(200, `{"name":"other","partitions":3}`))
	tp, err := c.Topic(context.Background(), "dlq")
	if err != nil || tp.Redrive == nil || tp.Redrive.ID != "00112233aabbccdd" || tp.Redrive.Moved != 3 {
		t.Fatalf("topic %+v %v", tp, err)
	}
	if tp, err = c.Topic(context.Background(), "other"); err != nil || tp.Redrive != nil {
		t.Fatalf("topic without a job %+v %v", tp, err)
	}
}
