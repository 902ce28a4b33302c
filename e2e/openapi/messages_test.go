package openapi

import (
	"strings"
	"testing"
)

// raw is a produce of body with the given content type as root.
func raw(path, contentType, body string) call {
	return call{method: "POST", path: path, as: root, body: []byte(body), contentType: contentType}
}

// withClient adds X-Narad-Client to c.
func withClient(c call) call {
	c.header = map[string]string{"X-Narad-Client": "openapi-e2e"}
	return c
}

func (cl *client) produce(t *testing.T) {
	schema := obj{"type": "object", "required": []string{"id"}}
	cl.createTopic(t, obj{"name": "events", "schema": schema})
	const p = "/v1/topics/events/produce"
	a := cl.do(t, raw(p+"?key=customer-42", "application/octet-stream", `{"id":1}`), 202)
	if len(a.body) != 0 {
		t.Errorf("produce 202 body %q", a.body)
	}
	cl.do(t, raw(p+"?partition=2", "application/json", `{"id":2}`), 202)
	cl.do(t, withClient(raw(p, "text/plain", `{"id":3}`)), 202)
	cl.do(t, raw(p, "application/json", `{"nope":1}`), 400).wantError(t, "invalid argument: schema")
	cl.do(t, raw(p, "application/octet-stream", ""), 400).wantError(t, "message required")
	cl.do(t, raw(p+"?partition=9", "application/json", `{"id":4}`), 400).wantError(t, "partition out of range")
	cl.do(t, bad(raw(p+"?partition=abc", "application/json", `{"id":4}`)), 400).wantError(t, "invalid partition")
	cl.do(t, raw("/v1/topics/nosuch/produce", "application/json", `{"id":5}`), 404).wantError(t, "topic not found")
	cl.do(t, bad(raw(p, "", `{"id":6}`)), 415)
	cl.do(t, raw(p, "application/octet-stream", strings.Repeat("x", 1<<20+1)), 413)
	cl.do(t, raw(p+"?delay_ms=60000", "application/json", `{"id":7}`), 202)
	cl.do(t, raw(p+"?deliver_at_ms=1700000000000", "application/json", `{"id":8}`), 202)
	cl.do(t, bad(raw(p+"?delay_ms=-1", "application/json", `{"id":9}`)), 400).wantError(t, "invalid delay_ms")
	cl.do(t, raw(p+"?delay_ms=1&deliver_at_ms=2", "application/json", `{"id":9}`), 400).wantError(t, "delay_ms and deliver_at_ms exclude each other")

	const b = "/v1/topics/events/produce/batch"
	batch := obj{"messages": []obj{
		{"key": "customer-42", "payload": obj{"id": 10}},
		{"key": "AIOD/w==", "key_encoding": "base64", "payload": obj{"id": 11}, "partition": 1},
		{"payload": "eyJpZCI6MTJ9", "payload_encoding": "base64"},
		{"payload": obj{"id": 13}, "delay_ms": 30000},
		{"payload": obj{"id": 14}, "deliver_at_ms": 1700000000000},
	}}
	var acc struct {
		Accepted int `json:"accepted"`
	}
	cl.do(t, js("POST", b, root, batch), 202).decode(t, &acc)
	if acc.Accepted != 5 {
		t.Errorf("accepted %d, want 5", acc.Accepted)
	}
	cl.do(t, js("POST", b, root, obj{"messages": []obj{{"payload": obj{"id": 1}}, {"payload": obj{"x": 1}}}}), 400).
		wantError(t, "message 1: invalid argument: schema")
	cl.do(t, bad(js("POST", b, root, obj{"messages": []obj{}})), 400).wantError(t, "messages required")
	cl.do(t, js("POST", b+"?key=k", root, batch), 400).wantError(t, "key is set per message")
	encoded := js("POST", b, root, batch)
	encoded.header = map[string]string{"Content-Encoding": "br"}
	cl.do(t, bad(encoded), 415).wantError(t, "unsupported Content-Encoding")
	cl.do(t, js("POST", "/v1/topics/nosuch/produce/batch", root, batch), 404)
}

// message is what the tests read of an envelope.
type message struct {
	Topic     string `json:"topic"`
	Partition int    `json:"partition"`
	Offset    int64  `json:"offset"`
	Handle    string `json:"receipt_handle"`
}

func (cl *client) consumeAndAck(t *testing.T) {
	cl.createTopic(t, obj{"name": "work"})
	cl.createTopic(t, obj{"name": "pinned"})
	cl.createTopic(t, obj{"name": "idle"})
	msgs := make([]obj, 6)
	for i := range msgs {
		msgs[i] = obj{"payload": obj{"n": i}}
	}
	cl.do(t, js("POST", "/v1/topics/work/produce/batch", root, obj{"messages": msgs}), 202)
	cl.do(t, raw("/v1/topics/pinned/produce?partition=2", "application/octet-stream", "\xff\xfe binary"), 202)

	// queue, batch, pinned and replay reads
	var q message
	cl.do(t, get("/v1/topics/work/consume?wait=5s", root), 200).decode(t, &q)
	if q.Topic != "work" || q.Handle == "" {
		t.Fatalf("queue consume: %+v", q)
	}
	var batch struct {
		Messages []message `json:"messages"`
	}
	a := cl.do(t, withClient(get("/v1/topics/work/consume?max=10&wait=1m", root)), 200)
	a.decode(t, &batch)
	if len(batch.Messages) == 0 || a.header.Get("X-Narad-Wait-Clamped") != "10s" {
		t.Fatalf("batch consume: %s (clamped %q)", a.body, a.header.Get("X-Narad-Wait-Clamped"))
	}
	cl.do(t, get("/v1/topics/work/consume?max=5", root), 400).wantError(t, "X-Narad-Client")
	cl.do(t, bad(withClient(get("/v1/topics/work/consume?max=0", root))), 400)
	cl.do(t, bad(get("/v1/topics/work/consume?wait=soon", root)), 400).wantError(t, "invalid wait")
	cl.do(t, get("/v1/topics/work/consume?offset=0", root), 400).wantError(t, "partition required")
	cl.do(t, get("/v1/topics/nosuch/consume", root), 404)
	cl.do(t, get("/v1/topics/idle/consume?wait=100ms", root), 204)

	var pinned message
	cl.do(t, get("/v1/topics/pinned/consume?partition=2&wait=5s", root), 200).decode(t, &pinned)
	if pinned.Partition != 2 || pinned.Handle == "" {
		t.Errorf("pinned consume: %+v", pinned)
	}
	var replay message
	cl.do(t, get("/v1/topics/pinned/consume?partition=2&offset=0", root), 200).decode(t, &replay)
	if replay.Handle != "" || replay.Offset != 0 {
		t.Errorf("replay: %+v", replay)
	}
	cl.do(t, get("/v1/topics/pinned/consume?partition=2&offset=7", root), 204)

	// settle them: extend, ack, a stale handle, nack, batch ack
	ack := func(query string, want int) answer {
		return cl.do(t, call{method: "POST", path: "/v1/topics/work/ack?" + query, as: root, contentType: "application/json"}, want)
	}
	ack("receipt_handle="+q.Handle+"&extend=true", 204)
	ack("receipt_handle="+q.Handle, 204)
	ack("receipt_handle="+q.Handle, 410).wantError(t, "receipt handle no longer matches an active reservation")
	ack("receipt_handle="+batch.Messages[0].Handle+"&extend=0", 204)
	cl.do(t, bad(call{method: "POST", path: "/v1/topics/work/ack?receipt_handle=not-a-handle", as: root, contentType: "application/json"}), 400)
	cl.do(t, bad(call{method: "POST", path: "/v1/topics/work/ack?receipt_handle=" + q.Handle + "&extend=maybe", as: root, contentType: "application/json"}), 400)
	cl.do(t, call{method: "POST", path: "/v1/topics/pinned/ack?receipt_handle=" + pinned.Handle + "&extend=0&delay_ms=60000&reason=schema+v2+not+deployed", as: root,
		header: map[string]string{"X-Narad-Client": "openapi-e2e"}}, 204)
	cl.do(t, bad(call{method: "POST", path: "/v1/topics/work/ack?receipt_handle=" + q.Handle + "&extend=0&delay_ms=-5", as: root, contentType: "application/json"}), 400).
		wantError(t, "invalid delay_ms: want an integer from 0 to 43200000 (milliseconds)")
	ack("receipt_handle="+q.Handle+"&delay_ms=5", 400).wantError(t, "delay_ms applies to a nack only (extend=0)")
	ack("receipt_handle="+q.Handle+"&reason=why", 400).wantError(t, "reason applies to a nack only (extend=0)")
	cl.do(t, bad(call{method: "POST", path: "/v1/topics/work/ack?receipt_handle=" + q.Handle + "&extend=0&reason=", as: root, contentType: "application/json"}), 400).
		wantError(t, "invalid reason: want 1 to 1024 bytes of UTF-8")
	cl.do(t, call{method: "POST", path: "/v1/topics/work/ack?receipt_handle=" + q.Handle, as: root}, 415)
	cl.do(t, call{method: "POST", path: "/v1/topics/nosuch/ack?receipt_handle=0:0:1", as: root, contentType: "application/json"}, 404)

	handles := []string{"not-a-handle"}
	for _, m := range batch.Messages[1:] {
		handles = append(handles, m.Handle)
	}
	handles = append(handles, q.Handle)
	var res struct {
		Results []struct {
			Status int    `json:"status"`
			Error  string `json:"error"`
		} `json:"results"`
	}
	cl.do(t, js("POST", "/v1/topics/work/ack", root, obj{"receipt_handles": handles}), 200).decode(t, &res)
	if len(res.Results) != len(handles) || res.Results[0].Status != 400 || res.Results[len(handles)-1].Status != 410 {
		t.Errorf("batch ack of %d handles: %+v", len(handles), res.Results)
	}
	for i, r := range res.Results[1 : len(handles)-1] {
		if r.Status != 204 {
			t.Errorf("batch ack result %d: %+v", i+1, r)
		}
	}
	cl.do(t, bad(js("POST", "/v1/topics/work/ack", root, obj{"receipt_handles": []string{}})), 400).wantError(t, "receipt_handles required")
	cl.do(t, js("POST", "/v1/topics/work/ack", root, obj{"receipt_handles": []string{strings.Repeat("1", 70000)}}), 413)
	ack("", 400).wantError(t, "receipt_handle required")
}
