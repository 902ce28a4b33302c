package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// ensure that percentile follows the nearest-rank definition.
func TestPercentile(t *testing.T) {
	t.Parallel()
	ten := []time.Duration{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	cases := map[string]struct {
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		"empty_is_zero":  {sorted: nil, p: 50, want: 0},
		"single_value":   {sorted: []time.Duration{7}, p: 99, want: 7},
		"median_of_ten":  {sorted: ten, p: 50, want: 5},
		"p95_of_ten":     {sorted: ten, p: 95, want: 10},
		"p90_of_ten":     {sorted: ten, p: 90, want: 9},
		"p100_is_max":    {sorted: ten, p: 100, want: 10},
		"tiny_p_is_min":  {sorted: ten, p: 0.1, want: 1},
		"p99_of_hundred": {sorted: seqDurations(100), p: 99, want: 99},
		"p50_odd_count":  {sorted: []time.Duration{1, 2, 3}, p: 50, want: 2},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if got := percentile(tc.sorted, tc.p); got != tc.want {
				t.Fatalf("percentile(%v) = %v, want %v", tc.p, got, tc.want)
			}
		})
	}
}

func seqDurations(n int) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = time.Duration(i + 1)
	}
	return out
}

// ensure that a latency series keeps at most its limit of samples and still answers from them.
func TestLatenciesReservoir(t *testing.T) {
	t.Parallel()
	l := newLatencies(100)
	for i := range 10000 {
		l.add(time.Duration(i % 1000))
	}
	if len(l.samples) != 100 || l.seen != 10000 {
		t.Fatalf("kept %d of %d", len(l.samples), l.seen)
	}
	p := l.percentiles(50, 100)
	if p[0] < 200 || p[0] > 800 || p[1] > 999 {
		t.Fatalf("percentiles %v do not describe a uniform 0-999 series", p)
	}
}

// ensure that every payload kind carries the id and send time back, at the requested size.
func TestPayloadRoundTrip(t *testing.T) {
	t.Parallel()
	id := benchID{Run: 0x17f0c0ffee123456, Seq: 987654321}
	sent := int64(1783615560123456789)
	cases := map[string]struct {
		kind    payloadKind
		size    int
		minSize int
	}{
		"json_sized":       {kind: kindJSON, size: 256},
		"json_too_small":   {kind: kindJSON, size: 1, minSize: 70},
		"text_sized":       {kind: kindText, size: 300},
		"text_too_small":   {kind: kindText, size: 10, minSize: 40},
		"binary_sized":     {kind: kindBinary, size: 4096},
		"binary_too_small": {kind: kindBinary, size: 3, minSize: binaryHeaderLen},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := encodePayload(tc.kind, id, sent, tc.size)
			if len(b) < max(tc.size, tc.minSize) || (tc.minSize == 0 && len(b) != tc.size) {
				t.Fatalf("len %d for size %d", len(b), tc.size)
			}
			switch tc.kind {
			case kindJSON:
				if !json.Valid(b) {
					t.Fatalf("json payload is not JSON: %s", b)
				}
			case kindText:
				if json.Valid(b) || !utf8.Valid(b) {
					t.Fatal("text payload must be UTF-8 and not JSON, so the server quotes it")
				}
			case kindBinary:
				if utf8.Valid(b) {
					t.Fatal("binary payload must not be UTF-8, so the server sends base64")
				}
			}
			gotID, gotSent, ok := decodePayload(b)
			if !ok || gotID != id || gotSent != sent {
				t.Fatalf("decoded %+v %d %v", gotID, gotSent, ok)
			}
		})
	}
}

// ensure that payloads bench did not write are not mistaken for its own.
func TestDecodePayloadRejectsForeign(t *testing.T) {
	t.Parallel()
	for name, b := range map[string][]byte{
		"plain_text":     []byte("hello"),
		"other_json":     []byte(`{"order":1}`),
		"short_binary":   {0xff, 'N', 'B', '1', 0},
		"bad_text_id":    []byte("narad-bench zz 1 2 x"),
		"bad_json_id":    []byte(`{"narad_bench":"zz","seq":1,"sent_ns":2}`),
		"truncated_text": []byte("narad-bench 00ff"),
		"empty":          nil,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if _, _, ok := decodePayload(b); ok {
				t.Fatalf("%q decoded as a bench payload", b)
			}
		})
	}
}

// ensure that mixed mode rotates json, text and binary.
func TestKindFor(t *testing.T) {
	t.Parallel()
	var got []payloadKind
	for seq := range uint64(4) {
		got = append(got, kindFor("mixed", seq))
	}
	if !slices.Equal(got, []payloadKind{kindJSON, kindText, kindBinary, kindJSON}) || kindFor("binary", 0) != kindBinary || kindFor("json", 1) != kindJSON {
		t.Fatalf("kinds %v", got)
	}
}

// ensure that the ledger counts lost, duplicate and unconfirmed messages and signals a drain.
func TestLedgerAccounting(t *testing.T) {
	t.Parallel()
	type event struct {
		produced bool // else consumed
		seq      uint64
		ok       bool
	}
	p := func(seq uint64, ok bool) event { return event{produced: true, seq: seq, ok: ok} }
	c := func(seq uint64) event { return event{seq: seq} }
	cases := map[string]struct {
		events  []event
		want    ledgerSummary
		drained bool
	}{
		"all_consumed_once":        {events: []event{p(0, true), p(1, true), c(1), c(0)}, want: ledgerSummary{Accepted: 2, Consumed: 2}, drained: true},
		"one_lost":                 {events: []event{p(0, true), p(1, true), c(0)}, want: ledgerSummary{Accepted: 2, Consumed: 1, Lost: 1}},
		"duplicates_counted":       {events: []event{p(0, true), c(0), c(0), c(0)}, want: ledgerSummary{Accepted: 1, Consumed: 1, Duplicates: 2}, drained: true},
		"consumed_before_202":      {events: []event{c(3), p(3, true)}, want: ledgerSummary{Accepted: 1, Consumed: 1}, drained: true},
		"failed_produce_not_lost":  {events: []event{p(0, false), p(1, true), c(1)}, want: ledgerSummary{Accepted: 1, Failed: 1, Consumed: 1}, drained: true},
		"failed_produce_delivered": {events: []event{p(0, false), c(0)}, want: ledgerSummary{Failed: 1, Consumed: 1, Unconfirmed: 1}, drained: true},
		"nothing_produced":         {events: nil, want: ledgerSummary{}, drained: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			l := newLedger()
			for _, ev := range tc.events {
				if ev.produced {
					l.produced(ev.seq, ev.ok)
				} else {
					l.consumed(ev.seq)
				}
			}
			select {
			case <-l.drained():
				t.Fatal("drained before producing ended")
			default:
			}
			l.producersDone()
			if got := l.summary(); got != tc.want {
				t.Fatalf("summary %+v, want %+v", got, tc.want)
			}
			select {
			case <-l.drained():
				if !tc.drained {
					t.Fatal("drained with messages outstanding")
				}
			default:
				if tc.drained {
					t.Fatal("not drained")
				}
			}
		})
	}
}

// ensure that a run against a faithful broker produces, consumes and acks everything: lost 0, PASS.
func TestBenchRunPasses(t *testing.T) {
	t.Parallel()
	cases := map[string][]string{
		"single_produce_single_consume": {"--count", "120", "--producers", "4", "--consumers", "2", "--payload", "mixed"},
		"batch_produce_batch_consume":   {"--count", "250", "--producers", "3", "--consumers", "2", "--produce-batch", "20", "--consume-batch", "15", "--payload", "binary", "--size", "100"},
		"rate_limited_text":             {"--count", "40", "--producers", "2", "--consumers", "1", "--rate", "20000", "--payload", "text"},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := newFakeBroker(t)
			b.addTopic("bench", 3)
			r := runCLI(t, cliOpts{}, append([]string{"bench", "bench", "--json", "--consume-wait", "200ms", "-s", b.url()}, args...)...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s\n%s", r.code, r.stderr, r.stdout)
			}
			var rep benchReport
			if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
				t.Fatalf("%v: %s", err, r.stdout)
			}
			count := rep.Produced
			if rep.Result != "PASS" || rep.ProduceFailures != 0 || rep.Consume == nil || rep.Consume.Lost != 0 || rep.Consume.Consumed != count || rep.Consume.Foreign != 0 {
				t.Fatalf("report %s", r.stdout)
			}
			if acked, leased := b.ackedCount("bench"); acked != count || leased != 0 {
				t.Fatalf("broker acked %d leased %d of %d", acked, leased, count)
			}
		})
	}
}

// ensure that a broker that answers 202 but drops one message makes bench report it lost and fail.
func TestBenchFailsOnLostMessage(t *testing.T) {
	t.Parallel()
	for name, batch := range map[string]string{"single_produce": "1", "batch_produce": "10"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := newFakeBroker(t)
			b.addTopic("bench", 3)
			b.dropNth = 17
			r := runCLI(t, cliOpts{}, "bench", "bench", "--count", "50", "--consumers", "2", "--produce-batch", batch, "--drain-timeout", "2s", "--consume-wait", "50ms", "-s", b.url()) // the drain waits out the dropped message; 2 s leaves the race detector room
			if r.code != 1 || !strings.Contains(r.stderr, "bench: FAIL: 1 accepted message(s) not consumed") {
				t.Fatalf("exit %d stderr %q", r.code, r.stderr)
			}
			for _, want := range []string{"50 accepted, 0 failed", "49 distinct, 0 duplicate deliveries, 1 lost", "result FAIL"} {
				if !strings.Contains(squash(r.stdout), want) {
					t.Fatalf("report lacks %q:\n%s", want, r.stdout)
				}
			}
		})
	}
}

// ensure that a produce-only run spreads its producers over --servers and
// reports rates and latencies: with --client pinned each producer keeps to
// one server over one connection (as before --client existed); with the
// default http client every request takes the next server in turn.
func TestBenchProduceOnlyOverServers(t *testing.T) {
	t.Parallel()
	for _, mode := range clientModes {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			b1, b2 := newFakeBroker(t), newFakeBroker(t)
			b1.addTopic("bench", 3)
			b2.addTopic("bench", 3)
			metrics := newFakeMetrics(t, 0, 0.1, nil) // scrapes elsewhere, so the brokers count produce connections only
			r := runCLI(t, cliOpts{}, "bench", "bench", "--client", mode, "--count", "40", "--producers", "2", "--rate", "400", "--servers", b1.url()+", "+b2.url(), "--metrics", metrics.url())
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			n1, n2 := len(b1.lines("POST /v1/topics/bench/produce")), len(b2.lines("POST /v1/topics/bench/produce"))
			if mode == clientPinned && (n1 == 0 || n2 == 0 || n1+n2 != 40) || mode == clientHTTP && (n1 != 20 || n2 != 20) {
				t.Fatalf("requests split %d/%d, want 40 over both servers", n1, n2)
			}
			if c1, c2 := b1.connections(), b2.connections(); mode == clientPinned && (c1 != 1 || c2 != 1) {
				t.Fatalf("%d and %d connections, want one producer's connection on each server", c1, c2)
			}
			for _, want := range []string{"client " + clientDesc[mode], "40 accepted, 0 failed", "produce latency p50 ", "node CPU 0.10s on 1 of 1 node(s)", "result PASS"} {
				if !strings.Contains(squash(r.stdout), want) {
					t.Fatalf("report lacks %q:\n%s", want, r.stdout)
				}
			}
			if strings.Contains(r.stdout, "consumed") {
				t.Fatalf("a produce-only run reported consumption:\n%s", r.stdout)
			}
		})
	}
}

// squash collapses runs of white space, so checks ignore table padding.
func squash(s string) string { return strings.Join(strings.Fields(s), " ") }

// ensure that bench fails when nothing is accepted, and refuses bad flags as usage errors.
func TestBenchRefusals(t *testing.T) {
	t.Parallel()
	b := newFakeBroker(t)
	cases := map[string]struct {
		args []string
		code int
		msg  string
	}{
		"nothing_accepted":    {args: []string{"--count", "5"}, code: 1, msg: "no message was accepted (5 produce failures; first: http 404: topic not found)"},
		"consume_batch_range": {args: []string{"--consume-batch", "101"}, code: 2, msg: "--consume-batch must be 1 to 100"},
		"produce_batch_range": {args: []string{"--produce-batch", "0"}, code: 2, msg: "--produce-batch must be 1 to 1000"},
		"payload_mode":        {args: []string{"--payload", "xml"}, code: 2, msg: "--payload must be one of json, text, binary, mixed"},
		"zero_count":          {args: []string{"--count", "0"}, code: 2, msg: "--count must be >= 1"},
		"client_mode":         {args: []string{"--client", "fast"}, code: 2, msg: "--client must be one of http, pinned"},
		"metrics_url":         {args: []string{"--metrics", "localhost:9100"}, code: 2, msg: `--metrics: "localhost:9100" is not an http(s) URL`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := runCLI(t, cliOpts{}, append([]string{"bench", "missing", "-s", b.url()}, tc.args...)...)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.msg) {
				t.Fatalf("exit %d stderr %q, want %d %q", r.code, r.stderr, tc.code, tc.msg)
			}
		})
	}
}

// ensure that a duration-bounded run stops producing on its own and still accounts for every message.
func TestBenchDuration(t *testing.T) {
	t.Parallel()
	b := newFakeBroker(t)
	b.addTopic("bench", 3)
	r := runCLI(t, cliOpts{}, "bench", "bench", "--duration", "150ms", "--rate", "500", "--producers", "2", "--consumers", "1", "--consume-wait", "50ms", "--json", "-s", b.url())
	var rep benchReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || r.code != 0 {
		t.Fatalf("exit %d %v: %s %s", r.code, err, r.stdout, r.stderr)
	}
	if rep.Produced == 0 || rep.Produced > 100 || rep.Consume.Lost != 0 || rep.Consume.Consumed != rep.Produced {
		t.Fatalf("report %+v %+v", rep, rep.Consume)
	}
}

// ensure that progress lines go to stderr, rewritten with \r on a terminal and one per line otherwise.
func TestBenchProgressLine(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		tty     bool
		prefix  string
		newline bool
	}{
		"terminal": {tty: true, prefix: "\rbench ", newline: true},
		"pipe":     {tty: false, prefix: "bench ", newline: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := newFakeBroker(t)
			b.addTopic("bench", 3)
			r := runCLI(t, cliOpts{tty: tc.tty, progress: time.Millisecond}, "bench", "bench", "--count", "30", "--rate", "600", "--producers", "1", "-s", b.url())
			if r.code != 0 || !strings.HasPrefix(r.stderr, tc.prefix) || !strings.HasSuffix(r.stderr, "\n") || !strings.Contains(r.stderr, " accepted (") {
				t.Fatalf("exit %d stderr %q", r.code, r.stderr)
			}
			if lines := strings.Count(r.stderr, "\n"); tc.tty && lines != 1 || !tc.tty && lines < 2 {
				t.Fatalf("%d lines on stderr: %q", lines, r.stderr)
			}
		})
	}
}
