package openapi

import (
	"strings"
	"testing"
	"time"
)

// obj is a JSON object for a request body.
type obj = map[string]any

// js is a JSON request as user as.
func js(method, path string, as *cred, body any) call {
	return call{method: method, path: path, as: as, body: jsonBody(body), contentType: "application/json"}
}

// get is a body-less GET as user as.
func get(path string, as *cred) call { return call{method: "GET", path: path, as: as} }

// del is a DELETE as user as.
func del(path string, as *cred) call { return call{method: "DELETE", path: path, as: as} }

// bad marks c as breaking the document on purpose.
func bad(c call) call { c.badRequest = true; return c }

// topicView is what the tests read of a topic object.
type topicView struct {
	Name           string   `json:"name"`
	ID             string   `json:"id"`
	Partitions     int      `json:"partitions"`
	Role           string   `json:"role"`
	Parent         string   `json:"parent"`
	Children       []string `json:"children"`
	SchemaVersion  int      `json:"schema_version"`
	PartitionStats []struct {
		Index int `json:"index"`
	} `json:"partition_stats"`
	Redelivery map[string]any `json:"redelivery"`
	DeadLetter map[string]any `json:"dead_letter"`
	Redrive    *redriveView   `json:"redrive"`
}

// redriveView is what the tests read of a redrive job.
type redriveView struct {
	ID          string `json:"id"`
	To          string `json:"to"`
	RatePerSec  int    `json:"rate_per_sec"`
	MaxMessages int    `json:"max_messages"`
	State       string `json:"state"`
	Moved       int    `json:"moved"`
	Skipped     int    `json:"skipped"`
	Runs        int    `json:"runs"`
	StartedBy   string `json:"started_by"`
}

// createTopic creates a topic as root and wants 201.
func (cl *client) createTopic(t *testing.T, body obj) topicView {
	t.Helper()
	var v topicView
	cl.do(t, js("POST", "/v1/topics", root, body), 201).decode(t, &v)
	return v
}

func (cl *client) topics(t *testing.T) {
	schema := obj{"type": "object", "required": []string{"id"}, "properties": obj{"id": obj{"type": "integer"}}}
	orders := cl.createTopic(t, obj{"name": "orders", "partitions": 3, "retention_ms": 0, "schema": schema})
	if orders.Role != "" || len(orders.ID) != 16 {
		t.Errorf("create answer: %+v", orders)
	}
	cl.createTopic(t, obj{"name": "scratch"})
	cl.do(t, js("POST", "/v1/topics", root, obj{"name": "orders"}), 409).wantError(t, "topic already exists")
	cl.do(t, js("POST", "/v1/topics", root, obj{"name": "ORDERS"}), 409).wantError(t, "differs only in letter case")
	cl.do(t, js("POST", "/v1/topics", root, obj{"name": "p2", "partitions": 2}), 400).wantError(t, "partitions must be >= 3")
	cl.do(t, bad(js("POST", "/v1/topics", root, obj{"name": "g", "garbage": 1})), 400).wantError(t, `invalid json: json: unknown field "garbage"`)
	cl.do(t, js("POST", "/v1/topics", root, obj{"name": "huge", "owner": strings.Repeat("o", 1<<20)}), 413).wantError(t, "request body too large")
	noType := call{method: "POST", path: "/v1/topics", as: root, body: jsonBody(obj{"name": "n"})}
	cl.do(t, bad(noType), 415).wantError(t, "state-changing requests must send")

	var page struct {
		Topics []topicView `json:"topics"`
		Next   string      `json:"next_page_token"`
	}
	cl.do(t, get("/v1/topics?limit=1", root), 200).decode(t, &page)
	if len(page.Topics) != 1 || page.Next == "" {
		t.Errorf("first page: %+v", page)
	}
	cl.do(t, get("/v1/topics?limit=1000&page_token="+page.Next, root), 200)
	cl.do(t, bad(get("/v1/topics?limit=0", root)), 400).wantError(t, "limit must be a positive integer")

	var d topicView
	cl.do(t, get("/v1/topics/orders", root), 200).decode(t, &d)
	if len(d.PartitionStats) != 3 || d.SchemaVersion != 1 || d.Role != "standalone" {
		t.Errorf("describe: %+v", d)
	}
	cl.do(t, get("/v1/topics/orders?partition=1", root), 200).decode(t, &d)
	if len(d.PartitionStats) != 1 || d.PartitionStats[0].Index != 1 {
		t.Errorf("describe partition 1: %+v", d.PartitionStats)
	}
	cl.do(t, get("/v1/topics/orders?partition=99", root), 400).wantError(t, "invalid partition")
	cl.do(t, get("/v1/topics/nosuch", root), 404).wantError(t, "topic not found")

	cl.do(t, js("PATCH", "/v1/topics/orders", root, obj{"retention_ms": 7200000, "max_in_flight_per_partition": 512, "partitions": 4}), 200)
	wider := obj{"type": "object", "required": []string{"id"}, "properties": obj{"id": obj{"type": "integer"}, "note": obj{"type": "string"}}}
	cl.do(t, js("PATCH", "/v1/topics/orders", root, obj{"schema": wider, "schema_base_version": 1}), 200)
	cl.do(t, js("PATCH", "/v1/topics/orders", root, obj{"schema": schema, "schema_base_version": 1}), 409).wantError(t, "schema version conflict")
	cl.do(t, bad(js("PATCH", "/v1/topics/orders", root, obj{})), 400).wantError(t, "at least one of")
	cl.do(t, bad(js("PATCH", "/v1/topics/orders", root, obj{"visibility_timeout_ms": 1000})), 400).wantError(t, "unknown field")
	cl.do(t, js("PATCH", "/v1/topics/nosuch", root, obj{"retention_ms": 0}), 404)
	cl.redelivery(t)
	cl.deadLetter(t)
	cl.redrive(t)

	var hist struct {
		Topic    string `json:"topic"`
		Version  int    `json:"version"`
		Versions []any  `json:"versions"`
	}
	cl.do(t, get("/v1/topics/orders/schema", root), 200).decode(t, &hist)
	if hist.Version != 2 || len(hist.Versions) != 2 {
		t.Errorf("schema history: %+v", hist)
	}
	cl.do(t, get("/v1/topics/scratch/schema", root), 200)
	cl.do(t, get("/v1/topics/nosuch/schema", root), 404)

	cl.do(t, bad(del("/v1/topics/scratch?force=maybe", root)), 400)
	cl.do(t, del("/v1/topics/scratch?force=false", root), 204)
	cl.do(t, del("/v1/topics/scratch", root), 404).wantError(t, "topic not found")
}

func (cl *client) children(t *testing.T) {
	cl.createTopic(t, obj{"name": "fan"})
	cl.createTopic(t, obj{"name": "fan-delayed"})
	replica := cl.createTopic(t, obj{"name": "fan-replica", "parent": "fan"})
	if replica.Role != "child" || replica.Parent != "fan" {
		t.Errorf("create as child: %+v", replica)
	}
	var parent topicView
	cl.do(t, js("POST", "/v1/topics/fan/children", root, obj{"child": "fan-delayed", "delay_ms": 60000}), 200).decode(t, &parent)
	if parent.Role != "parent" || len(parent.Children) != 2 {
		t.Errorf("attach answer: %+v", parent)
	}
	cl.do(t, js("POST", "/v1/topics/fan/children", root, obj{"child": "fan-delayed"}), 409)
	cl.do(t, js("POST", "/v1/topics/fan/children", root, obj{"child": "nosuch"}), 404)
	cl.do(t, bad(js("POST", "/v1/topics/fan/children", root, obj{"child": "fan-delayed", "lag": 1})), 400).wantError(t, "invalid json")

	var list struct {
		Parent   string `json:"parent"`
		Children []struct {
			Name    string `json:"name"`
			DelayMs int64  `json:"delay_ms"`
		} `json:"children"`
	}
	cl.do(t, get("/v1/topics/fan/children?partitions=false", root), 200).decode(t, &list)
	if list.Parent != "fan" || len(list.Children) != 2 || list.Children[1].DelayMs != 60000 {
		t.Errorf("children: %+v", list)
	}
	cl.do(t, get("/v1/topics/fan-delayed/children", root), 200)
	cl.do(t, bad(get("/v1/topics/fan/children?partitions=maybe", root)), 400)
	cl.do(t, get("/v1/topics/nosuch/children", root), 404)

	cl.do(t, call{method: "POST", path: "/v1/topics/fan-delayed/produce", as: root, body: []byte("x"), contentType: "application/octet-stream"}, 409).
		wantError(t, "delayed child topic is not allowed")
	cl.do(t, bad(del("/v1/topics/fan/children/fan-delayed?force=maybe", root)), 400)
	cl.do(t, del("/v1/topics/fan/children/fan-delayed?force=true", root), 204)
	cl.do(t, del("/v1/topics/fan/children/fan-delayed", root), 404)
}

// redelivery exercises the topic's redelivery backoff (our extension) on
// create, alter and describe, and its refusals.
func (cl *client) redelivery(t *testing.T) {
	jobs := cl.createTopic(t, obj{"name": "jobs", "redelivery": obj{"initial_ms": 1000, "jitter": 0.1}})
	if jobs.Redelivery == nil || jobs.Redelivery["max_ms"] != 600000.0 {
		t.Errorf("create with redelivery: %+v", jobs)
	}
	cl.do(t, js("PATCH", "/v1/topics/jobs", root, obj{"redelivery": obj{"initial_ms": 200, "multiplier": 3, "max_ms": 5000}}), 200)
	var d topicView
	cl.do(t, get("/v1/topics/jobs", root), 200).decode(t, &d)
	if d.Redelivery == nil || d.Redelivery["multiplier"] != 3.0 {
		t.Errorf("describe after alter: %+v", d.Redelivery)
	}
	cl.do(t, js("PATCH", "/v1/topics/jobs", root, obj{"redelivery": nil}), 200)
	cl.do(t, js("POST", "/v1/topics", root, obj{"name": "nojobs", "redelivery": nil}), 201)
	cl.do(t, js("PATCH", "/v1/topics/jobs", root, obj{"redelivery": obj{"initial_ms": 200, "max_ms": 100}}), 400).wantError(t, "redelivery.max_ms must be from initial_ms (200)")
	cl.do(t, bad(js("PATCH", "/v1/topics/jobs", root, obj{"redelivery": obj{"initial_ms": 0}})), 400).wantError(t, "redelivery.initial_ms must be from 1")
	cl.do(t, bad(js("PATCH", "/v1/topics/jobs", root, obj{"redelivery": obj{"max_ms": 100}})), 400).wantError(t, "redelivery.initial_ms is required")
	cl.do(t, bad(js("POST", "/v1/topics", root, obj{"name": "j2", "redelivery": obj{"initial_ms": 5, "jitter": 2}})), 400).wantError(t, "redelivery.jitter must be from 0 to 1")
	cl.do(t, bad(js("POST", "/v1/topics", root, obj{"name": "j2", "redelivery": obj{"initial_ms": 5, "later": 1}})), 400).wantError(t, `unknown field "later"`)
}

// deadLetter exercises the topic's dead-letter policy (our extension) on
// create, alter, describe and clear, and its refusals.
func (cl *client) deadLetter(t *testing.T) {
	cl.createTopic(t, obj{"name": "jobs-dlq"})
	dl := cl.createTopic(t, obj{"name": "dl-jobs", "redelivery": obj{"initial_ms": 100},
		"dead_letter": obj{"topic": "jobs-dlq", "max_receive_count": 5}})
	if dl.DeadLetter == nil || dl.DeadLetter["topic"] != "jobs-dlq" || dl.DeadLetter["max_receive_count"] != 5.0 || dl.Redelivery == nil {
		t.Errorf("create with dead_letter: %+v", dl)
	}
	cl.do(t, js("PATCH", "/v1/topics/dl-jobs", root, obj{"dead_letter": obj{"topic": "jobs", "max_receive_count": 1000}}), 200)
	var d topicView
	cl.do(t, get("/v1/topics/dl-jobs", root), 200).decode(t, &d)
	if d.DeadLetter == nil || d.DeadLetter["topic"] != "jobs" || d.DeadLetter["max_receive_count"] != 1000.0 {
		t.Errorf("describe after alter: %+v", d.DeadLetter)
	}
	var cleared topicView
	cl.do(t, js("PATCH", "/v1/topics/dl-jobs", root, obj{"dead_letter": nil}), 200).decode(t, &cleared)
	if cleared.DeadLetter != nil || cleared.Redelivery == nil {
		t.Errorf("clear: %+v", cleared)
	}
	cl.do(t, js("POST", "/v1/topics", root, obj{"name": "nodl", "dead_letter": nil}), 201)
	cl.do(t, js("PATCH", "/v1/topics/dl-jobs", root, obj{"dead_letter": obj{"topic": "nowhere", "max_receive_count": 3}}), 400).
		wantError(t, "invalid argument: dead_letter.topic names no topic: nowhere")
	cl.do(t, js("PATCH", "/v1/topics/dl-jobs", root, obj{"dead_letter": obj{"topic": "dl-jobs", "max_receive_count": 3}}), 400).
		wantError(t, `dead_letter.topic must name another topic than "dl-jobs"`)
	cl.do(t, bad(js("PATCH", "/v1/topics/dl-jobs", root, obj{"dead_letter": obj{"topic": "jobs-dlq", "max_receive_count": 0}})), 400).
		wantError(t, "dead_letter.max_receive_count must be from 1 to 1000")
	cl.do(t, bad(js("PATCH", "/v1/topics/dl-jobs", root, obj{"dead_letter": obj{"max_receive_count": 3}})), 400).
		wantError(t, "dead_letter.topic is required")
	cl.do(t, bad(js("POST", "/v1/topics", root, obj{"name": "dl2", "dead_letter": obj{"topic": "jobs-dlq", "max_receive_count": 1001}})), 400).
		wantError(t, "dead_letter.max_receive_count must be from 1 to 1000")
	cl.do(t, bad(js("POST", "/v1/topics", root, obj{"name": "dl2", "dead_letter": obj{"topic": "jobs-dlq", "max_receive_count": 3, "after": 1}})), 400).
		wantError(t, `unknown field "after"`)
	cl.do(t, get("/v1/topics/dl2", root), 404)
}

// redrive exercises a redrive job (our extension): a start on a topic with
// no dead letters, read until it ends done, a cancel of a running job, and
// the refusals.
func (cl *client) redrive(t *testing.T) {
	cl.createTopic(t, obj{"name": "rd-dlq"})
	cl.createTopic(t, obj{"name": "rd-retry"})
	const route = "/v1/topics/rd-dlq/redrive"
	cl.do(t, get(route, root), 404).wantError(t, "no redrive job on this topic")
	var j redriveView
	cl.do(t, js("POST", route, root, obj{"to": "rd-retry", "rate_per_sec": 0, "max_messages": 10}), 202).decode(t, &j)
	if len(j.ID) != 16 || j.State != "running" || j.To != "rd-retry" || j.MaxMessages != 10 || j.StartedBy != rootUser {
		t.Errorf("start answer: %+v", j)
	}
	cl.do(t, js("POST", route, root, obj{}), 409).wantError(t, "already runs redrive "+j.ID)
	for deadline := time.Now().Add(30 * time.Second); j.State == "running"; {
		if time.Now().After(deadline) {
			t.Fatalf("the job of an empty dead-letter topic still runs after 30 s: %+v", j)
		}
		time.Sleep(200 * time.Millisecond)
		cl.do(t, get(route, root), 200).decode(t, &j)
	}
	if j.State != "done" || j.Moved != 0 || j.Skipped != 0 || j.Runs != 1 {
		t.Errorf("ended job: %+v", j)
	}
	cl.do(t, del(route, root), 409).wantError(t, `topic "rd-dlq" runs no redrive job`)
	var d topicView
	cl.do(t, get("/v1/topics/rd-dlq", root), 200).decode(t, &d)
	if d.Redrive == nil || d.Redrive.ID != j.ID || d.Redrive.State != "done" {
		t.Errorf("describe after the job: %+v", d.Redrive)
	}

	// Five letters at one a second keep a job running while it is cancelled.
	letter := obj{"payload": obj{"dead_letter": obj{"topic": "rd-retry", "partition": 0, "offset": 0, "timestamp": 1, "receive_count": 5}, "payload": obj{"n": 1}}}
	cl.do(t, js("POST", "/v1/topics/rd-dlq/produce/batch", root, obj{"messages": []obj{letter, letter, letter, letter, letter}}), 202)
	cl.do(t, js("POST", route, root, obj{"rate_per_sec": 1}), 202).decode(t, &j)
	var cancelled redriveView
	cl.do(t, del(route, root), 200).decode(t, &cancelled)
	if cancelled.ID != j.ID || cancelled.State != "cancelled" || cancelled.To != "" || cancelled.RatePerSec != 1 {
		t.Errorf("cancel answer: %+v", cancelled)
	}
	cl.do(t, del(route, root), 409).wantError(t, `topic "rd-dlq" runs no redrive job`)
	cl.do(t, get(route, root), 200).decode(t, &j)
	if j.State != "cancelled" {
		t.Errorf("read after the cancel: %+v", j)
	}

	var dflt redriveView
	cl.do(t, withClient(call{method: "POST", path: "/v1/topics/rd-retry/redrive", as: root}), 202).decode(t, &dflt)
	if dflt.To != "" || dflt.RatePerSec != 100 || dflt.MaxMessages != 0 || dflt.State != "running" {
		t.Errorf("start with an empty body: %+v", dflt)
	}
	cl.do(t, js("POST", route, root, obj{"to": "rd-dlq"}), 400).wantError(t, "invalid argument: to names the dead-letter topic itself")
	cl.do(t, js("POST", route, root, obj{"to": "nowhere"}), 400).wantError(t, "invalid argument: to names no topic: nowhere")
	cl.do(t, bad(js("POST", route, root, obj{"to": ""})), 400).wantError(t, "invalid argument: to must name a topic")
	cl.do(t, bad(js("POST", route, root, obj{"rate_per_sec": 100001})), 400).wantError(t, "invalid argument: rate_per_sec must be from 0 to 100000")
	cl.do(t, bad(js("POST", route, root, obj{"max_messages": -1})), 400).wantError(t, "invalid argument: max_messages must be 0 (all) or more")
	cl.do(t, bad(js("POST", route, root, obj{"later": 1})), 400).wantError(t, `invalid json: json: unknown field "later"`)
	cl.do(t, js("POST", "/v1/topics/nosuch/redrive", root, obj{}), 404).wantError(t, "topic not found")
	cl.do(t, get("/v1/topics/nosuch/redrive", root), 404).wantError(t, "topic not found")
	cl.do(t, del("/v1/topics/nosuch/redrive", root), 404).wantError(t, "topic not found")
}
