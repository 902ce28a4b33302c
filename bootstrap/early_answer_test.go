package bootstrap

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"testing"
	"time"

	"go.uber.org/fx/fxtest"
	"go.uber.org/goleak"
	"go.uber.org/zap"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/adapters/httpapi"
	"github.com/narad/narad/adapters/telemetry"
	"github.com/narad/narad/application/produce"
	"github.com/narad/narad/bootstrap/config"
)

const (
	// earlyAnswerRounds is how many oversize requests each case sends.
	earlyAnswerRounds = 20
	// oversizeBodyBytes is a produce body well past the 1 MiB cap, so the
	// client is still sending when the 413 comes.
	oversizeBodyBytes = 4 << 20
	// answerMaxDuration bounds any wait for an answer.
	answerMaxDuration = 10 * time.Second
	// msg413 is the produce routes' 413 body.
	msg413 = `{"error":"request body too large"}` + "\n"
	// body431 is net/http's plain-text 431 body.
	body431 = "431 Request Header Fields Too Large"
)

// apiServer runs the real serveHTTP (its listener and server settings) over
// the real engine with the produce routes on fakes, security off, and
// returns its address.
func apiServer(t *testing.T, edit func(*config.HTTP)) string {
	t.Helper()
	noLeaks(t)
	cfg := config.Default()
	cfg.HTTP.Addr = fmt.Sprintf("127.0.0.1:%d", freePort(t))
	if edit != nil {
		edit(&cfg.HTTP)
	}
	log := zap.NewNop()
	store := fake.NewMetaStore()
	t.Cleanup(store.Close)
	svc := produce.NewService(produce.ServiceDeps{Topics: store, WAL: fake.NewWAL(), Schemas: fake.NewSchemaValidator(),
		Clock: fake.NewClock(time.Now()), Metrics: &fake.Metrics{}})
	m, r := telemetry.NewMetrics(), &Readiness{}
	h := newEngine(cfg, log, m, r, httpapi.Security{}, httpapi.ProduceRoutes(svc, log))
	lc := fxtest.NewLifecycle(t)
	serveHTTP(lc, cfg, h, r, m, log, BootTime(time.Now()))
	lc.RequireStart()
	t.Cleanup(func() { lc.RequireStop() })
	return cfg.HTTP.Addr
}

// noLeaks fails t when goroutines it started outlive it and its cleanups
// (registered first, so it runs last).
func noLeaks(t *testing.T) {
	t.Helper()
	before := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, before) })
}

// roundTrip sends req and reads the whole answer; reused says whether it
// went over a connection that had served a request before.
func roundTrip(c *http.Client, req *http.Request) (status int, body string, reused bool, err error) {
	trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused }}
	resp, err := c.Do(req.WithContext(httptrace.WithClientTrace(req.Context(), trace)))
	if err != nil {
		return 0, "", reused, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), reused, err
}

func oversizeProduce(t *testing.T, addr string, chunked bool) *http.Request {
	t.Helper()
	var body io.Reader = bytes.NewReader(make([]byte, oversizeBodyBytes))
	if chunked {
		body = io.MultiReader(body) // hides the length: sent chunked
	}
	req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/v1/topics/t/produce", body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/octet-stream")
	return req
}

// ensure that an oversize produce gets its 413 intact, never a reset, 20
// times out of 20, on fresh connections and on connections that served a
// request before, whether the body's length is declared or not.
func TestOversizeProduceGets413Intact(t *testing.T) {
	addr := apiServer(t, nil)
	for _, tc := range []struct {
		name            string
		reused, chunked bool
	}{{"fresh", false, false}, {"fresh_chunked", false, true}, {"reused", true, false}, {"reused_chunked", true, true}} {
		t.Run(tc.name, func(t *testing.T) {
			intact := 0
			for range earlyAnswerRounds {
				tr := &http.Transport{}
				c := &http.Client{Transport: tr, Timeout: answerMaxDuration}
				if tc.reused {
					req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/healthz", nil)
					if status, _, _, err := roundTrip(c, req); err != nil || status != http.StatusOK {
						t.Fatalf("healthz: %d %v", status, err)
					}
				}
				status, body, reused, err := roundTrip(c, oversizeProduce(t, addr, tc.chunked))
				tr.CloseIdleConnections()
				if reused != tc.reused {
					t.Fatalf("connection reused %v, want %v", reused, tc.reused)
				}
				if err != nil || status != http.StatusRequestEntityTooLarge || body != msg413 {
					t.Errorf("%d %q %v", status, body, err)
					continue
				}
				intact++
			}
			t.Logf("%d of %d oversize produces got an intact 413", intact, earlyAnswerRounds)
		})
	}
}

// headerBlock is a GET /healthz whose header block (request line through
// the empty line, CRLFs included) is exactly size bytes.
func headerBlock(t *testing.T, size int) []byte {
	t.Helper()
	const start, end = "GET /healthz HTTP/1.1\r\nHost: narad\r\nX-Pad: ", "\r\n\r\n"
	pad := size - len(start) - len(end)
	if pad < 1 {
		t.Fatalf("a header block of %d bytes is too small to pad", size)
	}
	return []byte(start + strings.Repeat("p", pad) + end)
}

// readAnswer reads one answer off br, whole, within the bound.
func readAnswer(t *testing.T, conn net.Conn, br *bufio.Reader) (int, string) {
	t.Helper()
	if err := conn.SetReadDeadline(time.Now().Add(answerMaxDuration)); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("answer cut short (%d %q): %v", resp.StatusCode, b, err)
	}
	if resp.StatusCode == http.StatusRequestHeaderFieldsTooLarge && (string(b) != body431 || resp.Header.Get("Content-Type") != "text/plain; charset=utf-8") {
		t.Fatalf("431 is not net/http's plain text: %q %q", resp.Header.Get("Content-Type"), b)
	}
	return resp.StatusCode, string(b)
}

// ensure that a header block of exactly http.max_header_bytes is served
// and one byte more is 431 in plain text (conformance 158), on a fresh
// connection and on one reused after a request with a body, whether the
// next request follows the answer or is sent at once behind the body
// (where net/http's read-ahead would hide up to 4 KiB of it).
func TestHeaderCapIsExact(t *testing.T) {
	maxBytes := config.Default().HTTP.MaxHeaderBytes
	addr := apiServer(t, nil)
	firsts := map[string]string{
		"length": "POST /v1/topics/none/produce HTTP/1.1\r\nHost: narad\r\nContent-Type: application/octet-stream\r\nContent-Length: 5\r\n\r\nhello",
		"chunked": "POST /v1/topics/none/produce HTTP/1.1\r\nHost: narad\r\nX-Narad-Client: t\r\nTransfer-Encoding: chunked\r\n\r\n" +
			"3;ext=1\r\nhel\r\n2\r\nlo\r\n0\r\nX-Trailer: t\r\n\r\n",
	}
	for _, size := range []int{maxBytes, maxBytes + 1} {
		want := http.StatusOK
		if size > maxBytes {
			want = http.StatusRequestHeaderFieldsTooLarge
		}
		t.Run(fmt.Sprintf("fresh_%d", size), func(t *testing.T) {
			conn, br := dialAPI(t, addr)
			write(t, conn, headerBlock(t, size))
			if got, body := readAnswer(t, conn, br); got != want {
				t.Fatalf("%d bytes: %d %q, want %d", size, got, body, want)
			}
		})
		for name, first := range firsts {
			for _, pipelined := range []bool{false, true} {
				t.Run(fmt.Sprintf("reused_%s_pipelined_%v_%d", name, pipelined, size), func(t *testing.T) {
					conn, br := dialAPI(t, addr)
					write(t, conn, []byte(first))
					if pipelined {
						write(t, conn, headerBlock(t, size))
					}
					if got, body := readAnswer(t, conn, br); got != http.StatusNotFound {
						t.Fatalf("first request: %d %q", got, body)
					}
					if !pipelined {
						write(t, conn, headerBlock(t, size))
					}
					if got, body := readAnswer(t, conn, br); got != want {
						t.Fatalf("%d bytes: %d %q, want %d", size, got, body, want)
					}
				})
			}
		}
	}
}

func dialAPI(t *testing.T, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn, bufio.NewReader(conn)
}

func write(t *testing.T, conn net.Conn, b []byte) {
	t.Helper()
	if err := conn.SetWriteDeadline(time.Now().Add(answerMaxDuration)); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Write(b); err != nil {
		t.Fatal(err)
	}
}

// ensure that a Go client sending a 70,000-byte header block (over the cap
// by less than net/http's slack) gets the whole plain-text 431, 20 times
// out of 20, on fresh connections and on reused ones.
func TestOversizeHeaderGets431IntactThroughGoClient(t *testing.T) {
	addr := apiServer(t, nil)
	for _, reuse := range []bool{false, true} {
		t.Run(fmt.Sprintf("reused_%v", reuse), func(t *testing.T) {
			for range earlyAnswerRounds {
				tr := &http.Transport{}
				c := &http.Client{Transport: tr, Timeout: answerMaxDuration}
				if reuse {
					req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/healthz", nil)
					if status, _, _, err := roundTrip(c, req); err != nil || status != http.StatusOK {
						t.Fatalf("healthz: %d %v", status, err)
					}
				}
				req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/healthz", nil)
				req.Header.Set("X-Big", strings.Repeat("b", 70_000))
				status, body, reused, err := roundTrip(c, req)
				tr.CloseIdleConnections()
				if err != nil || status != http.StatusRequestHeaderFieldsTooLarge || body != body431 || reused != reuse {
					t.Fatalf("%d %q reused %v: %v", status, body, reused, err)
				}
			}
		})
	}
}

// ensure that a produce body that stops arriving gets 408 with a JSON
// error naming no address through the real server, not a 400 with the
// socket addresses.
func TestSlowProduceBodyGets408(t *testing.T) {
	addr := apiServer(t, func(h *config.HTTP) { h.ReadTimeout = config.Duration(300 * time.Millisecond) })
	conn, br := dialAPI(t, addr)
	write(t, conn, []byte("POST /v1/topics/t/produce HTTP/1.1\r\nHost: narad\r\nContent-Type: application/octet-stream\r\nContent-Length: 100\r\n\r\nonly part"))
	status, body := readAnswer(t, conn, br)
	if status != http.StatusRequestTimeout || body != `{"error":"request body not received within the read timeout"}`+"\n" {
		t.Fatalf("%d %q", status, body)
	}
}
