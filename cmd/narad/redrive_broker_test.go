package main

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/narad/narad/domain/deadletter"
)

// putLetter writes l's dead letter to partition p of the dead-letter topic,
// keyed by the original key as the broker writes it.
func (b *fakeBroker) putLetter(dlt string, p int, l deadletter.Letter) {
	b.put(dlt, p, l.Key, deadletter.AppendLetter(nil, l))
}

// contents lists every record of the topic as key=payload (both quoted),
// sorted, so two topics can be compared as sets.
func (b *fakeBroker) contents(topic string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, p := range b.topics[topic].parts {
		for _, rec := range p.records {
			out = append(out, fmt.Sprintf("%q=%q", rec.Key, rec.Payload))
		}
	}
	slices.Sort(out)
	return out
}

// lapseLeases gives back every lease of the topic, as if their visibility
// timeout had passed.
func (b *fakeBroker) lapseLeases(topic string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, p := range b.topics[topic].parts {
		clear(p.leases)
	}
}

// rewriter is a transport that answers or rewrites the requests its rule
// picks and passes the rest on to the fake broker.
type rewriter struct {
	mu   sync.Mutex
	rule func(r *http.Request) *http.Response // nil = pass r on
}

func (rw *rewriter) RoundTrip(r *http.Request) (*http.Response, error) {
	rw.mu.Lock()
	res := rw.rule(r)
	rw.mu.Unlock()
	if res != nil {
		if r.Body != nil {
			_ = r.Body.Close()
		}
		res.Request = r
		return res, nil
	}
	return http.DefaultTransport.RoundTrip(r)
}

func (rw *rewriter) client() *http.Client { return &http.Client{Transport: rw} }

// answer is a canned JSON response.
func answer(status int, body string) *http.Response {
	return &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body))}
}

// failing answers every batch produce with status.
func failing(status int) *rewriter {
	return &rewriter{rule: func(r *http.Request) *http.Response {
		if strings.HasSuffix(r.URL.Path, "/produce/batch") {
			return answer(status, `{"error":"injected failure"}`)
		}
		return nil
	}}
}

// lostFirstAck turns the first batch ack of topic into a nack that the
// broker applies, and answers it as if every lease had lapsed (410).
func lostFirstAck(t *testing.T, topic string) *rewriter {
	done := false
	return &rewriter{rule: func(r *http.Request) *http.Response {
		if done || r.URL.Path != "/v1/topics/"+topic+"/ack" {
			return nil
		}
		done = true
		q := r.URL.Query()
		q.Set("extend", "0")
		r2 := r.Clone(r.Context())
		r2.URL.RawQuery = q.Encode()
		res, err := http.DefaultTransport.RoundTrip(r2)
		if err != nil {
			t.Errorf("nack in place of the ack: %v", err)
			return answer(500, `{"error":"test transport"}`)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		n := strings.Count(string(body), `"status"`)
		results := strings.TrimSuffix(strings.Repeat(`{"status":410,"error":"receipt handle no longer matches an active reservation"},`, n), ",")
		return answer(200, `{"results":[`+results+`]}`)
	}}
}
