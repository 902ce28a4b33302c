package remotehttp_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/narad/narad/ports"
)

// ensure that a request asking for compression goes zstd-compressed when
// that saves 10 % (the server decodes the body it was sent), and as is
// when it does not (internals.md §7.2 "Compression").
func TestDoCompressesWhenItPays(t *testing.T) {
	var mu sync.Mutex
	var got [][]byte
	var encodings []string
	ts := newTestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.Header.Get("Content-Encoding") == "zstd" {
			dec, _ := zstd.NewReader(nil)
			body, _ = dec.DecodeAll(body, nil)
			dec.Close()
		}
		mu.Lock()
		got, encodings = append(got, body), append(encodings, r.Header.Get("Content-Encoding"))
		mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
	}))
	ep := ts.endpoint("")
	ep.Limits = limits(5 * time.Second)
	c := newClient(t, newTransport(t, ts.loopbackOptions()), ep)
	text := bytes.Repeat([]byte(`{"key":"customer-42","payload":{"order":"ord_124"}},`), 200)
	noise := make([]byte, 4096)
	_, _ = rand.Read(noise)
	for _, body := range [][]byte{text, noise} {
		a, err := c.Do(context.Background(), ports.RemoteRequest{Method: http.MethodPost, Path: "/x", Body: body, Compress: true})
		if err != nil || a.Status != http.StatusAccepted {
			t.Fatalf("do: %v %+v", err, a)
		}
		if a.Compressed != (len(body) == len(text)) || a.Compressed && a.WireBytes >= len(text)*9/10 {
			t.Fatalf("compressed %v, %d wire bytes for %d", a.Compressed, a.WireBytes, len(body))
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if !bytes.Equal(got[0], text) || !bytes.Equal(got[1], noise) || encodings[0] != "zstd" || encodings[1] != "" {
		t.Fatalf("server saw encodings %q", encodings)
	}
}
