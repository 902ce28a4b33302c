package httpclient_test

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/narad/narad/adapters/httpclient"
)

// ensure that produce sends the raw body as octet-stream with key and partition only when set.
func TestProduceSendsRawBody(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		key       string
		partition *int
		query     map[string][]string
	}{
		"no_key":           {query: map[string][]string{}},
		"key_with_space":   {key: "a b:c", query: map[string][]string{"key": {"a b:c"}}},
		"binary_key":       {key: "\xff\x00", query: map[string][]string{"key": {"\xff\x00"}}},
		"pinned_and_keyed": {key: "k", partition: ptr(2), query: map[string][]string{"key": {"k"}, "partition": {"2"}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, rec := newRecorder(t, "", canned{status: 202})
			body := []byte("\x00raw bytes\xff")
			if err := c.Produce(context.Background(), "t", body, tc.key, tc.partition); err != nil {
				t.Fatal(err)
			}
			r := rec.requests()[0]
			if r.Method != http.MethodPost || r.Path != "/v1/topics/t/produce" || string(r.Body) != string(body) {
				t.Fatalf("%s %s body %q", r.Method, r.Path, r.Body)
			}
			if r.Header.Get("Content-Type") != "application/octet-stream" || !reflect.DeepEqual(r.Query, tc.query) {
				t.Fatalf("content type %q query %v", r.Header.Get("Content-Type"), r.Query)
			}
		})
	}
}

// ensure that an empty produce body is refused without a request.
func TestProduceRefusesEmptyBody(t *testing.T) {
	t.Parallel()
	c, rec := newRecorder(t, "", canned{status: 202})
	if err := c.Produce(context.Background(), "t", nil, "", nil); !errors.Is(err, httpclient.ErrEmptyMessage) {
		t.Fatalf("err = %v", err)
	}
	if len(rec.requests()) != 0 {
		t.Fatal("an empty body was sent")
	}
}

// ensure that a batch carries compact JSON as itself and anything else, and non-UTF-8 keys, as base64.
func TestProduceBatchEncodesMessages(t *testing.T) {
	t.Parallel()
	c, rec := newRecorder(t, "", jsonAnswer(202, `{"accepted":5}`))
	msgs := []httpclient.BatchMessage{
		{Key: []byte("customer-42"), Payload: []byte(`{"order_id":"<1>"}`)},
		{Payload: []byte(`{ "spaced": 1 }`)},
		{Key: []byte{0, 0xff}, Payload: []byte{0xff, 0xfe}, Partition: ptr(1)},
		{Payload: []byte("plain text")},
		{Payload: []byte(`"a json string"`)},
	}
	n, err := c.ProduceBatch(context.Background(), "t", msgs)
	if err != nil || n != 5 {
		t.Fatalf("accepted %d err %v", n, err)
	}
	r := rec.requests()[0]
	want := `{"messages":[` +
		`{"key":"customer-42","payload":{"order_id":"<1>"}},` +
		`{"payload":"eyAic3BhY2VkIjogMSB9","payload_encoding":"base64"},` +
		`{"key":"AP8=","key_encoding":"base64","payload":"//4=","payload_encoding":"base64","partition":1},` +
		`{"payload":"cGxhaW4gdGV4dA==","payload_encoding":"base64"},` +
		`{"payload":"a json string"}]}`
	if r.Path != "/v1/topics/t/produce/batch" || string(r.Body) != want || r.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("%s body\n%s\nwant\n%s", r.Path, r.Body, want)
	}
}

// ensure that a batch answer without the accepted count is a malformed reply.
func TestProduceBatchNeedsAcceptedCount(t *testing.T) {
	t.Parallel()
	c, _ := newRecorder(t, "", jsonAnswer(202, `{}`))
	if _, err := c.ProduceBatch(context.Background(), "t", []httpclient.BatchMessage{{Payload: []byte("x")}}); !errors.Is(err, httpclient.ErrMalformedReply) {
		t.Fatalf("err = %v", err)
	}
}

// ensure that consume sends wait, partition and max, and decodes 200, 204, batches and the clamp header.
func TestConsume(t *testing.T) {
	t.Parallel()
	one := `{"topic":"t","partition":2,"offset":7,"key":"k","payload":{"a":1},"timestamp":1783615560,"receipt_handle":"2:7:99"}`
	cases := map[string]struct {
		opts    httpclient.ConsumeOptions
		answer  canned
		query   map[string][]string
		offsets []int64
		clamped string
	}{
		"single_message":   {opts: httpclient.ConsumeOptions{Wait: 1500 * time.Millisecond}, answer: jsonAnswer(200, one), query: map[string][]string{"wait": {"1.5s"}}, offsets: []int64{7}},
		"nothing_arrived":  {opts: httpclient.ConsumeOptions{Wait: time.Minute}, answer: canned{status: 204, header: map[string]string{"X-Narad-Wait-Clamped": "10s"}}, query: map[string][]string{"wait": {"1m0s"}}, clamped: "10s"},
		"pinned_immediate": {opts: httpclient.ConsumeOptions{Partition: ptr(0)}, answer: canned{status: 204}, query: map[string][]string{"partition": {"0"}}},
		"batch":            {opts: httpclient.ConsumeOptions{Max: 10}, answer: jsonAnswer(200, `{"messages":[`+one+`,{"topic":"t","partition":0,"offset":3,"payload":"x","timestamp":1,"receipt_handle":"0:3:1"}]}`), query: map[string][]string{"max": {"10"}}, offsets: []int64{7, 3}},
		"batch_old_shape":  {opts: httpclient.ConsumeOptions{Max: 1}, answer: jsonAnswer(200, one), query: map[string][]string{"max": {"1"}}, offsets: []int64{7}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, rec := newRecorder(t, "", tc.answer)
			res, err := c.Consume(context.Background(), "t", tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			r := rec.requests()[0]
			if r.Method != http.MethodGet || r.Path != "/v1/topics/t/consume" || !reflect.DeepEqual(r.Query, tc.query) {
				t.Fatalf("%s %s query %v, want %v", r.Method, r.Path, r.Query, tc.query)
			}
			var offsets []int64
			for _, m := range res.Messages {
				offsets = append(offsets, m.Offset)
			}
			if !reflect.DeepEqual(offsets, tc.offsets) || res.WaitClamped != tc.clamped {
				t.Fatalf("offsets %v clamped %q", offsets, res.WaitClamped)
			}
		})
	}
}

// ensure that replay tells 200, 204 and 410 apart and returns other failures as errors.
func TestReplayDistinguishesOutcomes(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		answer  canned
		status  int
		reason  string
		wantErr int
	}{
		"found":      {answer: jsonAnswer(200, `{"topic":"t","partition":1,"offset":4,"payload":"hi","timestamp":5}`), status: 200},
		"past_end":   {answer: canned{status: 204}, status: 204},
		"aged_out":   {answer: jsonAnswer(410, `{"error":"receipt handle no longer matches an active reservation: offset 4 aged out of retention (oldest retained: 10)"}`), status: 410, reason: "receipt handle no longer matches an active reservation: offset 4 aged out of retention (oldest retained: 10)"},
		"owner_down": {answer: canned{status: 503, body: "partition owner is down; retry later"}, wantErr: 503},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, rec := newRecorder(t, "", tc.answer)
			res, err := c.Replay(context.Background(), "t", 1, 4)
			if got := httpclient.StatusOf(err); got != tc.wantErr {
				t.Fatalf("err = %v", err)
			}
			if res.Status != tc.status || res.Reason != tc.reason || (tc.status == 200) != (res.Message != nil) {
				t.Fatalf("result %+v", res)
			}
			if q := rec.requests()[0].Query; !reflect.DeepEqual(q, map[string][]string{"partition": {"1"}, "offset": {"4"}}) {
				t.Fatalf("query %v", q)
			}
			if res.Message != nil && (string(res.Message.Body) != "hi" || res.Message.ReceiptHandle != "") {
				t.Fatalf("message %+v", res.Message)
			}
		})
	}
}

// ensure that ack, extend and nack send the handle form-encoded with the right extend value and no body.
func TestSettleSingleHandle(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		call  func(*httpclient.Client, context.Context, string, string) error
		query map[string][]string
	}{
		"ack":    {call: (*httpclient.Client).Ack, query: map[string][]string{"receipt_handle": {"2:7:99"}}},
		"extend": {call: (*httpclient.Client).Extend, query: map[string][]string{"receipt_handle": {"2:7:99"}, "extend": {"true"}}},
		"nack":   {call: (*httpclient.Client).Nack, query: map[string][]string{"receipt_handle": {"2:7:99"}, "extend": {"0"}}},
		"nack_after": {call: func(c *httpclient.Client, ctx context.Context, topic, h string) error {
			return c.NackAfter(ctx, topic, h, 1500*time.Millisecond)
		},
			query: map[string][]string{"receipt_handle": {"2:7:99"}, "extend": {"0"}, "delay_ms": {"1500"}}},
		"nack_after_zero": {call: func(c *httpclient.Client, ctx context.Context, topic, h string) error {
			return c.NackAfter(ctx, topic, h, 0)
		},
			query: map[string][]string{"receipt_handle": {"2:7:99"}, "extend": {"0"}}},
		"nack_with_reason": {call: func(c *httpclient.Client, ctx context.Context, topic, h string) error {
			return c.NackWith(ctx, topic, h, httpclient.NackOptions{Reason: "bad & worse ü"})
		},
			query: map[string][]string{"receipt_handle": {"2:7:99"}, "extend": {"0"}, "reason": {"bad & worse ü"}}},
		"nack_with_both": {call: func(c *httpclient.Client, ctx context.Context, topic, h string) error {
			return c.NackWith(ctx, topic, h, httpclient.NackOptions{Delay: 2 * time.Second, Reason: "later"})
		},
			query: map[string][]string{"receipt_handle": {"2:7:99"}, "extend": {"0"}, "delay_ms": {"2000"}, "reason": {"later"}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, rec := newRecorder(t, "", canned{status: 204})
			if err := tc.call(c, context.Background(), "t", "2:7:99"); err != nil {
				t.Fatal(err)
			}
			r := rec.requests()[0]
			if r.Method != http.MethodPost || r.Path != "/v1/topics/t/ack" || len(r.Body) != 0 || !reflect.DeepEqual(r.Query, tc.query) {
				t.Fatalf("%s %s body %q query %v", r.Method, r.Path, r.Body, r.Query)
			}
			if r.Header.Get("Content-Type") == "" {
				t.Fatal("a body-less ack must still carry a content type")
			}
		})
	}
}

// ensure that a batch ack returns per-handle results in order and refuses a result count that does not match.
func TestAckBatch(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		op      httpclient.AckOp
		nack    *httpclient.NackOptions // sent through NackBatchWith when set
		answer  canned
		query   map[string][]string
		want    []httpclient.AckResult
		wantErr error
	}{
		"ack_mixed_results": {op: httpclient.OpAck, answer: jsonAnswer(200, `{"results":[{"status":204},{"status":410,"error":"receipt handle no longer matches an active reservation"}]}`), query: map[string][]string{},
			want: []httpclient.AckResult{{Status: 204}, {Status: 410, Error: "receipt handle no longer matches an active reservation"}}},
		"nack_mode": {op: httpclient.OpNack, answer: jsonAnswer(200, `{"results":[{"status":204},{"status":204}]}`), query: map[string][]string{"extend": {"0"}}, want: []httpclient.AckResult{{Status: 204}, {Status: 204}}},
		"nack_after": {op: httpclient.OpNack, nack: &httpclient.NackOptions{Delay: time.Minute}, answer: jsonAnswer(200, `{"results":[{"status":204},{"status":204}]}`),
			query: map[string][]string{"extend": {"0"}, "delay_ms": {"60000"}}, want: []httpclient.AckResult{{Status: 204}, {Status: 204}}},
		"nack_with_reason": {op: httpclient.OpNack, nack: &httpclient.NackOptions{Delay: time.Second, Reason: "poison"}, answer: jsonAnswer(200, `{"results":[{"status":204},{"status":204}]}`),
			query: map[string][]string{"extend": {"0"}, "delay_ms": {"1000"}, "reason": {"poison"}}, want: []httpclient.AckResult{{Status: 204}, {Status: 204}}},
		"short_results": {op: httpclient.OpExtend, answer: jsonAnswer(200, `{"results":[{"status":204}]}`), query: map[string][]string{"extend": {"true"}}, wantErr: httpclient.ErrMalformedReply},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, rec := newRecorder(t, "", tc.answer)
			batch := func(ctx context.Context, topic string, hs []string) ([]httpclient.AckResult, error) {
				return c.AckBatch(ctx, topic, hs, tc.op)
			}
			if tc.nack != nil {
				batch = func(ctx context.Context, topic string, hs []string) ([]httpclient.AckResult, error) {
					return c.NackBatchWith(ctx, topic, hs, *tc.nack)
				}
			}
			got, err := batch(context.Background(), "t", []string{"0:1:1", "1:2:3"})
			if !errors.Is(err, tc.wantErr) || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v err %v", got, err)
			}
			r := rec.requests()[0]
			if string(r.Body) != `{"receipt_handles":["0:1:1","1:2:3"]}` || !reflect.DeepEqual(r.Query, tc.query) {
				t.Fatalf("body %s query %v", r.Body, r.Query)
			}
		})
	}
}

// ensure that a schedule travels as delay_ms or deliver_at_ms on a single
// produce and as fields of a batch message, and that the zero schedule
// sends neither.
func TestProduceSendsTheSchedule(t *testing.T) {
	t.Parallel()
	c, rec := newRecorder(t, "", canned{status: 202})
	at := time.UnixMilli(1_800_000_000_123)
	for _, s := range []httpclient.Schedule{{Delay: 90 * time.Second}, {DeliverAt: at}, {}} {
		if err := c.ProduceScheduled(context.Background(), "t", []byte("x"), "", nil, s); err != nil {
			t.Fatal(err)
		}
	}
	want := []map[string][]string{{"delay_ms": {"90000"}}, {"deliver_at_ms": {"1800000000123"}}, {}}
	for i, r := range rec.requests() {
		if !reflect.DeepEqual(r.Query, want[i]) {
			t.Fatalf("request %d query %v, want %v", i, r.Query, want[i])
		}
	}
	b, brec := newRecorder(t, "", jsonAnswer(202, `{"accepted":2}`))
	msgs := []httpclient.BatchMessage{{Payload: []byte(`1`), Schedule: httpclient.Schedule{Delay: time.Second}}, {Payload: []byte(`2`), Schedule: httpclient.Schedule{DeliverAt: at}}}
	if _, err := b.ProduceBatch(context.Background(), "t", msgs); err != nil {
		t.Fatal(err)
	}
	if got := string(brec.requests()[0].Body); got != `{"messages":[{"payload":1,"delay_ms":1000},{"payload":2,"deliver_at_ms":1800000000123}]}` {
		t.Fatalf("batch body %s", got)
	}
}
