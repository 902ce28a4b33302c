package httpclient_test

import (
	"context"
	"errors"
	"testing"

	"github.com/narad/narad/adapters/httpclient"
)

// ensure that Scrape GETs the URL it is given, with the client's credentials, and returns the body.
func TestScrapeReturnsBodyWithCredentials(t *testing.T) {
	t.Parallel()
	const exposition = "# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total 1.5\n"
	c, rec := newRecorder(t, "alice", canned{status: 200, body: exposition})
	srv := c.Servers()[0]
	b, err := c.Scrape(context.Background(), srv+"/metrics")
	if err != nil || string(b) != exposition {
		t.Fatalf("Scrape = %q, %v", b, err)
	}
	r := rec.requests()[0]
	if r.Method != "GET" || r.Path != "/metrics" || !r.BasicOK || r.User != "alice" || r.Header.Get("X-Narad-Client") != "narad-cli/test" {
		t.Fatalf("request %+v", r)
	}
}

// ensure that Scrape turns an error status into an *APIError and refuses a URL that is not http(s).
func TestScrapeErrors(t *testing.T) {
	t.Parallel()
	c, _ := newRecorder(t, "", canned{status: 404, body: "404 page not found\n"})
	_, err := c.Scrape(context.Background(), c.Servers()[0]+"/metrics")
	if httpclient.StatusOf(err) != 404 || err.Error() != "http 404: 404 page not found" {
		t.Fatalf("err = %v", err)
	}
	if _, err := c.Scrape(context.Background(), "localhost:9100/metrics"); !errors.Is(err, httpclient.ErrBadServer) {
		t.Fatalf("err = %v, want ErrBadServer", err)
	}
}
