package remote

import (
	"testing"
	"time"
)

func narad(msg string) []byte { return []byte(`{"error":"` + msg + `"}` + "\n") }

const proxyPage = "<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"

// ensure that every row of internals.md §7.3 and each edge around it maps
// to its action, state, index and wait.
func TestClassify(t *testing.T) {
	cases := []struct {
		name       string
		a          Answer
		compressed bool
		state      State
		action     Action
		index      int
		wait       time.Duration
	}{
		// 202
		{"202", Answer{Status: 202, Body: []byte(`{"accepted":3}` + "\n")}, false, Running, Committed, -1, 0},
		{"202 empty body", Answer{Status: 202}, true, Running, Committed, -1, 0},
		// 400 naming message N
		{"400 message 12", Answer{Status: 400, Body: narad("message 12: invalid json")}, false, RejectedRecord, ResendBeforeIndex, 12, 0},
		{"400 message 0", Answer{Status: 400, Body: narad("message 0: invalid argument: schema: x")}, false, RejectedRecord, ResendBeforeIndex, 0, 0},
		{"400 message 12 compressed", Answer{Status: 400, Body: narad("message 12: invalid json")}, true, RejectedRecord, ResendBeforeIndex, 12, 0},
		{"400 message 999", Answer{Status: 400, Body: narad("message 999: message required")}, false, RejectedRecord, ResendBeforeIndex, 999, 0},
		// 400 without index, another Narad-shaped 4xx
		{"400 no index", Answer{Status: 400, Body: narad("invalid argument: schema: bad")}, false, RejectedRecord, Bisect, -1, 0},
		{"400 message x", Answer{Status: 400, Body: narad("message x: invalid payload")}, false, RejectedRecord, Bisect, -1, 0},
		{"400 negative index", Answer{Status: 400, Body: narad("message -1: invalid payload")}, false, RejectedRecord, Bisect, -1, 0},
		{"400 huge index", Answer{Status: 400, Body: narad("message 99999999999999999999999: invalid payload")}, false, RejectedRecord, Bisect, -1, 0},
		{"400 index without colon", Answer{Status: 400, Body: narad("message 3 invalid")}, false, RejectedRecord, Bisect, -1, 0},
		{"400 index without space", Answer{Status: 400, Body: narad("message 3:invalid")}, false, RejectedRecord, Bisect, -1, 0},
		{"400 index not a prefix", Answer{Status: 400, Body: narad("bad: message 3: invalid")}, false, RejectedRecord, Bisect, -1, 0},
		{"400 capitalised", Answer{Status: 400, Body: narad("Message 3: invalid")}, false, RejectedRecord, Bisect, -1, 0},
		{"400 invalid json uncompressed", Answer{Status: 400, Body: narad("invalid json: unexpected EOF")}, false, RejectedRecord, Bisect, -1, 0},
		{"400 too many messages", Answer{Status: 400, Body: narad("too many messages: 101 (max 100)")}, false, RejectedRecord, Bisect, -1, 0},
		{"400 no trailing newline", Answer{Status: 400, Body: []byte(`{"error":"message 4: x"}`)}, false, RejectedRecord, ResendBeforeIndex, 4, 0},
		{"400 extra fields", Answer{Status: 400, Body: []byte(`{"code":"x","error":"message 4: x"}`)}, false, RejectedRecord, ResendBeforeIndex, 4, 0},
		{"422 Narad-shaped", Answer{Status: 422, Body: narad("message 2: nope")}, false, RejectedRecord, Bisect, 2, 0},
		{"410 Narad-shaped", Answer{Status: 410, Body: narad("gone")}, false, RejectedRecord, Bisect, -1, 0},
		{"415 uncompressed", Answer{Status: 415, Body: narad("unsupported Content-Encoding: want zstd, gzip or none")}, false, RejectedRecord, Bisect, -1, 0},
		// 409
		{"409 delay child", Answer{Status: 409, Body: narad("direct produce to a delayed child topic is not allowed")}, false, RejectedRecord, BlockRecheck, -1, 0},
		{"409 stub with prefix", Answer{Status: 409, Body: narad(`message 0: remote child \"c\" lives on remote r; consume it there`)}, false, RejectedRecord, BlockRecheck, 0, 0},
		{"409 from a proxy", Answer{Status: 409, Body: []byte(proxyPage)}, false, RejectedRecord, BlockRecheck, -1, 0},
		// 413
		{"413 body", Answer{Status: 413, Body: narad("request body too large")}, false, RecordTooLarge, Halve, -1, 0},
		{"413 one message", Answer{Status: 413, Body: narad("message 7: message too large")}, false, RecordTooLarge, Halve, 7, 0},
		{"413 from a proxy", Answer{Status: 413, Body: []byte("<html>413 Request Entity Too Large</html>")}, false, RecordTooLarge, Halve, -1, 0},
		// 401, 403
		{"401", Answer{Status: 401, Body: narad("unauthorized")}, false, AuthFailed, GateClose, -1, 30 * time.Second},
		{"401 bare", Answer{Status: 401}, false, AuthFailed, GateClose, -1, 30 * time.Second},
		{"403", Answer{Status: 403, Body: narad("produce not allowed on this topic")}, false, Forbidden, Stall, -1, 30 * time.Second},
		// 404
		{"404 Narad-shaped", Answer{Status: 404, Body: narad("topic not found")}, false, TargetMissing, Stall, -1, 0},
		{"404 HTML", Answer{Status: 404, Body: []byte("<html><body>Not Found</body></html>")}, false, NoBatchProduce, ProbeListing, -1, 0},
		{"404 plain text", Answer{Status: 404, Body: []byte("404 page not found\n")}, false, NoBatchProduce, ProbeListing, -1, 0},
		{"404 empty", Answer{Status: 404}, false, NoBatchProduce, ProbeListing, -1, 0},
		{"404 other JSON", Answer{Status: 404, Body: []byte(`{"message":"no route"}`)}, false, NoBatchProduce, ProbeListing, -1, 0},
		{"404 error not a string", Answer{Status: 404, Body: []byte(`{"error":404}`)}, false, NoBatchProduce, ProbeListing, -1, 0},
		{"404 error null", Answer{Status: 404, Body: []byte(`{"error":null}`)}, false, NoBatchProduce, ProbeListing, -1, 0},
		// 3xx
		{"301", Answer{Status: 301, Body: []byte("<a href=x>Moved</a>")}, false, RedirectRefused, Stall, -1, 0},
		{"302", Answer{Status: 302}, false, RedirectRefused, Stall, -1, 0},
		{"307", Answer{Status: 307}, false, RedirectRefused, Stall, -1, 0},
		{"308", Answer{Status: 308}, false, RedirectRefused, Stall, -1, 0},
		// 429
		{"429 with Retry-After", Answer{Status: 429, Body: narad("too many in-flight produce requests"), RetryAfter: 5 * time.Second}, false, Throttled, GateClose, -1, 5 * time.Second},
		{"429 Retry-After over 60 s", Answer{Status: 429, RetryAfter: 2 * time.Minute}, false, Throttled, GateClose, -1, 60 * time.Second},
		{"429 without Retry-After", Answer{Status: 429}, false, Throttled, GateClose, -1, 0},
		{"429 negative Retry-After", Answer{Status: 429, RetryAfter: -time.Second}, false, Throttled, GateClose, -1, 0},
		// 408, 5xx, timeout, reset, non-Narad
		{"408", Answer{Status: 408}, false, Unavailable, RetryLane, -1, 0},
		{"500", Answer{Status: 500, Body: narad("produce failed")}, false, Unavailable, RetryLane, -1, 0},
		{"502 proxy HTML", Answer{Status: 502, Body: []byte(proxyPage)}, false, Unavailable, RetryLane, -1, 0},
		{"503 with message prefix", Answer{Status: 503, Body: narad("message 3: schema validation slot busy"), RetryAfter: time.Second}, false, Unavailable, RetryLane, -1, 0},
		{"504", Answer{Status: 504}, false, Unavailable, RetryLane, -1, 0},
		{"timeout or reset", Answer{Err: TransportUnavailable}, false, Unavailable, RetryLane, -1, 0},
		{"400 from a proxy", Answer{Status: 400, Body: []byte("<html>400 Bad Request</html>")}, false, Unavailable, RetryLane, -1, 0},
		{"418 from a proxy", Answer{Status: 418, Body: []byte("teapot")}, false, Unavailable, RetryLane, -1, 0},
		{"200 from something", Answer{Status: 200, Body: []byte("ok")}, false, Unavailable, RetryLane, -1, 0},
		{"204", Answer{Status: 204}, false, Unavailable, RetryLane, -1, 0},
		{"100", Answer{Status: 100}, false, Unavailable, RetryLane, -1, 0},
		{"no status", Answer{}, false, Unavailable, RetryLane, -1, 0},
		{"out of range", Answer{Status: 999}, false, Unavailable, RetryLane, -1, 0},
		{"a JSON array", Answer{Status: 400, Body: []byte(`["error"]`)}, false, Unavailable, RetryLane, -1, 0},
		// refused dial, TLS
		{"destination refused", Answer{Err: TransportDestinationRefused}, false, DestinationRefused, Stall, -1, 0},
		{"TLS failure", Answer{Err: TransportTLSFailed}, false, TLSFailed, GateClose, -1, 0},
		{"transport error wins over a status", Answer{Status: 202, Err: TransportTLSFailed}, false, TLSFailed, GateClose, -1, 0},
		{"unknown transport error", Answer{Err: TransportErr(99)}, false, Unavailable, RetryLane, -1, 0},
		// compression
		{"415 compressed", Answer{Status: 415, Body: narad("unsupported Content-Encoding: want zstd, gzip or none")}, true, Running, ResendUncompressed, -1, 0},
		{"415 compressed from a proxy", Answer{Status: 415}, true, Running, ResendUncompressed, -1, 0},
		{"400 invalid json compressed", Answer{Status: 400, Body: narad("invalid json: unexpected EOF")}, true, Running, ResendUncompressed, -1, 0},
		{"400 other compressed", Answer{Status: 400, Body: narad("messages required")}, true, RejectedRecord, Bisect, -1, 0},
	}
	for _, c := range cases {
		got := Classify(c.a, c.compressed)
		want := Verdict{State: c.state, Action: c.action, Index: c.index, RetryAfter: c.wait}
		if got != want {
			t.Errorf("%s: Classify = %+v (%s, %s), want %+v (%s, %s)", c.name, got, got.State, got.Action, want, want.State, want.Action)
		}
	}
}

// ensure that every 3xx, 5xx and 4xx status lands on some action, and that
// every action but Committed goes with a failure state.
func TestClassifyEveryStatus(t *testing.T) {
	for status := 100; status < 600; status++ {
		for _, body := range [][]byte{nil, narad("message 1: x"), []byte(proxyPage)} {
			for _, compressed := range []bool{false, true} {
				v := Classify(Answer{Status: status, Body: body}, compressed)
				if !v.State.Valid() || v.Action.String() == "invalid" || v.Index < -1 {
					t.Fatalf("status %d body %q: %+v", status, body, v)
				}
				if (v.Action == Committed) != (status == 202) {
					t.Fatalf("status %d: %s", status, v.Action)
				}
			}
		}
	}
}

// ensure that an index outside the request turns a resend into a bisect.
func TestVerdictWithin(t *testing.T) {
	v := Classify(Answer{Status: 400, Body: narad("message 12: invalid json")}, false)
	if got := v.Within(13); got != v {
		t.Fatalf("index 12 of 13 changed: %+v", got)
	}
	if got := v.Within(12); got.Action != Bisect || got.Index != -1 || got.State != RejectedRecord {
		t.Fatalf("index 12 of 12: %+v", got)
	}
	h := Classify(Answer{Status: 413, Body: narad("message 7: message too large")}, false)
	if got := h.Within(3); got.Action != Halve || got.Index != -1 {
		t.Fatalf("413 index 7 of 3: %+v", got)
	}
}

// ensure that the enums print their spec names.
func TestEnumNames(t *testing.T) {
	cases := [][2]string{
		{Committed.String(), "committed"},
		{ResendUncompressed.String(), "resend_uncompressed"},
		{Action(0).String(), "invalid"},
		{TransportNone.String(), "none"},
		{TransportDestinationRefused.String(), "destination_refused"},
		{TransportTLSFailed.String(), "tls_failed"},
		{TransportUnavailable.String(), "unavailable"},
		{TransportErr(9).String(), "invalid"},
	}
	for _, c := range cases {
		if c[0] != c[1] {
			t.Errorf("%q, want %q", c[0], c[1])
		}
	}
}
