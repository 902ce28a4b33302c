package httpapi

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/narad/narad/application/consume"
)

// Bounds of the slow-body tests: the server's read timeout, kept short so
// the suite stays fast, and how long a client waits for any answer at all.
const (
	slowBodyReadTimeoutDuration = 300 * time.Millisecond
	slowBodyAnswerMaxDuration   = 10 * time.Second
)

// slowBodyServer serves h over a real socket with a short read timeout.
func slowBodyServer(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ReadTimeout = slowBodyReadTimeoutDuration
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}

// sendSlowBody sends head, declaring a body of declared bytes, then only
// part of it, and returns the server's answer, read within the bound.
func sendSlowBody(t *testing.T, addr, head string, declared int, part []byte) (*http.Response, []byte) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(slowBodyAnswerMaxDuration)); err != nil {
		t.Fatal(err)
	}
	req := fmt.Sprintf("%sHost: narad\r\nContent-Length: %d\r\n\r\n", head, declared)
	if _, err := conn.Write(append([]byte(req), part...)); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a slow body: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("answer to a slow body cut short: %v", err)
	}
	return resp, body
}

// gzipPrefix is the first bytes of a gzip stream: a decoder waits for more.
func gzipPrefix(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write([]byte(`{"messages":[{"payload":1}]}`)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()[:4]
}

// ensure that every route that reads a body answers a body cut off by the
// read timeout with 408 and a JSON error naming no socket address (api.md
// §0.2: http.read_timeout bounds the whole request), never 400 or 500.
func TestSlowBodyIs408OnEveryBodyRoute(t *testing.T) {
	produceAddr := slowBodyServer(t, newProduceEnv(t).engine)
	topicAddr := slowBodyServer(t, newTopicRig(t).e)
	ackAddr := slowBodyServer(t, newConsumeFixture(t, time.Second, consume.Options{}).engine)
	users := &userHandlers{log: zap.NewNop()} // the body is read before the use case is reached
	userAddr := slowBodyServer(t, NewEngine(zap.NewNop(),
		Route{Method: http.MethodPost, Path: "/v1/users", Handle: users.create},
		Route{Method: http.MethodPut, Path: "/v1/users/:username/grants", Handle: users.grants},
		Route{Method: http.MethodPut, Path: "/v1/users/:username/password", Handle: users.password},
	))
	const jsonType = "Content-Type: application/json\r\n"
	cases := []struct {
		name, addr, head string
		part             []byte
	}{
		{"produce", produceAddr, "POST /v1/topics/t/produce HTTP/1.1\r\nContent-Type: application/octet-stream\r\n", []byte("half")},
		{"produce_nothing_sent", produceAddr, "POST /v1/topics/t/produce HTTP/1.1\r\nX-Narad-Client: t\r\n", nil},
		{"batch", produceAddr, "POST /v1/topics/t/produce/batch HTTP/1.1\r\n" + jsonType, []byte(`{"messages":[{"pay`)},
		{"batch_gzip", produceAddr, "POST /v1/topics/t/produce/batch HTTP/1.1\r\nContent-Encoding: gzip\r\n" + jsonType, gzipPrefix(t)},
		{"topic_create", topicAddr, "POST /v1/topics HTTP/1.1\r\n" + jsonType, []byte(`{"name":"or`)},
		{"topic_alter", topicAddr, "PATCH /v1/topics/orders HTTP/1.1\r\n" + jsonType, []byte(`{"retention_ms"`)},
		{"attach", topicAddr, "POST /v1/topics/orders/children HTTP/1.1\r\n" + jsonType, []byte(`{"child"`)},
		{"batch_ack", ackAddr, "POST /v1/topics/orders/ack HTTP/1.1\r\n" + jsonType, []byte(`{"receipt_handles":[`)},
		{"user_create", userAddr, "POST /v1/users HTTP/1.1\r\n" + jsonType, []byte(`{"username":`)},
		{"user_grants", userAddr, "PUT /v1/users/ann/grants HTTP/1.1\r\n" + jsonType, []byte(`{"grants":`)},
		{"user_password", userAddr, "PUT /v1/users/ann/password HTTP/1.1\r\n" + jsonType, []byte(`{"new_password":`)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			resp, body := sendSlowBody(t, tc.addr, tc.head, 4096, tc.part)
			want := `{"error":"` + msgBodyTimeout + `"}` + "\n"
			if resp.StatusCode != http.StatusRequestTimeout || string(body) != want {
				t.Fatalf("%d %q, want 408 %q", resp.StatusCode, body, want)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			if strings.Contains(string(body), "127.0.0.1") || strings.Contains(string(body), "i/o timeout") {
				t.Errorf("the answer leaks the transport: %q", body)
			}
		})
	}
}

// ensure that a Go client holding its body back (a pipe it never finishes)
// gets the 408 intact, and that a body which arrives in time is unaffected.
func TestSlowBodyThroughGoClient(t *testing.T) {
	env := newProduceEnv(t)
	env.create(t, "t", 1)
	addr := slowBodyServer(t, env.engine)
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: slowBodyAnswerMaxDuration}

	pr, pw := io.Pipe()
	defer pw.Close()
	go func() { _, _ = pw.Write([]byte("held")) }() // the rest never comes
	req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/v1/topics/t/produce", pr)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = 1024
	req.Header.Set("Content-Type", "application/octet-stream")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("a slow body got no answer: %v", err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(body), msgBodyTimeout) {
		t.Fatalf("%d %q %v", resp.StatusCode, body, err)
	}
	pw.CloseWithError(io.ErrClosedPipe)

	resp, err = client.Post("http://"+addr+"/v1/topics/t/produce", "application/octet-stream", strings.NewReader("on time"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("a body in time: %d", resp.StatusCode)
	}
}

// ensure that a read timeout maps to 408 through the error table, wrapped or
// not, and that other transport failures stay 400.
func TestBodyReadErrorMapping(t *testing.T) {
	timeout := &net.OpError{Op: "read", Net: "tcp", Err: errTimeoutForTest{}}
	for _, err := range []error{bodyReadError(timeout, "read body"), fmt.Errorf("decode: %w", bodyReadError(timeout, "invalid json"))} {
		if status, msg := statusOf(err); status != http.StatusRequestTimeout || msg != msgBodyTimeout {
			t.Errorf("%v → %d %q", err, status, msg)
		}
	}
	if status, msg := statusOf(bodyReadError(io.ErrUnexpectedEOF, "invalid json")); status != http.StatusBadRequest || msg != "invalid json: unexpected EOF" {
		t.Errorf("unexpected EOF → %d %q", status, msg)
	}
}

type errTimeoutForTest struct{}

func (errTimeoutForTest) Error() string   { return "i/o timeout" }
func (errTimeoutForTest) Timeout() bool   { return true }
func (errTimeoutForTest) Temporary() bool { return true }
