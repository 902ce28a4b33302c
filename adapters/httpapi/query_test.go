package httpapi

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"
)

func wantClientErr(t *testing.T, err error, msg string) {
	t.Helper()
	var ce *clientError
	if !errors.As(err, &ce) || ce.status != 400 || ce.msg != msg {
		t.Fatalf("error %v, want 400 %q", err, msg)
	}
}

// ensure that produce query rules and messages follow api.md §2.13.
func TestProduceQuery(t *testing.T) {
	p, err := parseProduceQuery("key=customer+42%21&partition=2&other=x")
	if err != nil || string(p.key) != "customer 42!" || !p.hasPartition || p.partition != 2 {
		t.Fatalf("got %+v %v", p, err)
	}
	p, err = parseProduceQuery("key=%FF%00")
	if err != nil || string(p.key) != "\xff\x00" {
		t.Fatalf("non-UTF-8 key: %q %v", p.key, err)
	}
	cases := map[string]string{
		"key=a&key=b":             "duplicate key query parameter",
		"partition=1&partition=2": "duplicate partition query parameter",
		"partition=":              "invalid partition: empty",
		"partition=-1":            "invalid partition: must be >= 0",
		"partition=x":             `invalid partition: strconv.ParseInt: parsing "x": invalid syntax`,
		"key=%zz":                 `invalid key: invalid URL escape "%zz"`,
		"k%zz=1":                  `invalid query parameter: invalid URL escape "%zz"`,
	}
	for raw, msg := range cases {
		_, err := parseProduceQuery(raw)
		wantClientErr(t, err, msg)
	}
}

// ensure that consume modes and their refusals follow api.md §2.14 (conformance 208, 212, 213).
func TestConsumeQuery(t *testing.T) {
	modes := map[string]consumeMode{
		"":                     modeQueue,
		"wait=2s":              modeQueue,
		"partition=1":          modePinned,
		"max=10":               modeBatch,
		"max=10&partition=1":   modeBatch,
		"partition=1&offset=0": modeReplay,
	}
	for raw, want := range modes {
		p, err := parseConsumeQuery(raw, true)
		if err != nil || p.mode != want {
			t.Errorf("%q: mode %v err %v, want %v", raw, p.mode, err, want)
		}
	}
	p, _ := parseConsumeQuery("wait=-5s", false)
	if p.wait != 0 {
		t.Errorf("negative wait became %v, want 0", p.wait)
	}
	p, _ = parseConsumeQuery("wait=1m30s", false)
	if p.wait != 90*time.Second {
		t.Errorf("wait %v", p.wait)
	}
	errs := map[string]string{
		"offset=3":                   "partition required for replay-mode consume",
		"partition=0&offset=-1":      "invalid offset: must be >= 0",
		"partition=0&offset=x":       `invalid offset: strconv.ParseInt: parsing "x": invalid syntax`,
		"partition=y":                `invalid partition: strconv.ParseInt: parsing "y": invalid syntax`,
		"wait=5":                     `invalid wait: time: missing unit in duration "5"`,
		"max=0":                      "invalid max: want an integer from 1 to 100",
		"max=101":                    "invalid max: want an integer from 1 to 100",
		"max=abc":                    "invalid max: want an integer from 1 to 100",
		"max=5&partition=0&offset=0": "max cannot be combined with offset: replay reads one record",
	}
	for raw, msg := range errs {
		_, err := parseConsumeQuery(raw, true)
		wantClientErr(t, err, msg)
	}
	_, err := parseConsumeQuery("max=10", false)
	wantClientErr(t, err, "batch consume (max) requires an X-Narad-Client header")
	if p, err := parseConsumeQuery("wait=0", false); err != nil || p.wait != 0 {
		t.Errorf("wait=0: %v %v", p.wait, err)
	}
}

// ensure that extend picks ack, extend or nack, first occurrence winning (api.md §2.15).
func TestExtendParameter(t *testing.T) {
	ops := map[string]ackOp{"": opAck, "extend=": opAck, "extend=false": opAck, "extend=true": opExtend, "extend=1": opExtend, "extend=0": opNack, "extend=0&extend=true": opNack}
	for raw, want := range ops {
		q, _ := parseQuery(raw)
		got, err := parseExtend(q)
		if err != nil || got != want {
			t.Errorf("%q: %v %v, want %v", raw, got, err, want)
		}
	}
	q, _ := parseQuery("extend=yes")
	_, err := parseExtend(q)
	wantClientErr(t, err, `invalid extend: want "true" (renew lease) or "0" (release for redelivery)`)
}

// ensure that no query string panics the parsers and every refusal is a 400 client error.
func FuzzQueryParsers(f *testing.F) {
	for _, s := range []string{"", "key=a&partition=1", "partition=0&offset=5&max=3", "wait=1m&max=100", "%", "a=%zz&&=&extend=0"} {
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, raw string, header bool) {
		check := func(err error) {
			var ce *clientError
			if err != nil && (!errors.As(err, &ce) || ce.status != 400) {
				t.Fatalf("%q: non-400 refusal %v", raw, err)
			}
		}
		_, err := parseProduceQuery(raw)
		check(err)
		p, err := parseConsumeQuery(raw, header)
		check(err)
		if err == nil && (p.wait < 0 || p.partition < 0 || p.offset < 0 || (p.mode == modeBatch && (p.max < 1 || p.max > 100))) {
			t.Fatalf("%q: out-of-range result %+v", raw, p)
		}
		if q, err := parseQuery(raw); err == nil {
			_, err = parseExtend(q)
			check(err)
		}
	})
}

// BenchmarkParseQueries parses what a single consume, a single ack and a
// pinned produce send.
func BenchmarkParseQueries(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parseConsumeQuery("wait=2s", false); err != nil {
			b.Fatal(err)
		}
		q, err := parseQuery("receipt_handle=3%3A1041%3A1599635717676452009")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := parseExtend(q); err != nil {
			b.Fatal(err)
		}
		if _, err := parseProduceQuery("partition=3"); err != nil {
			b.Fatal(err)
		}
	}
}

// ensure that reading a query in place answers as splitting it into a map
// of every parameter's values does (the plain reading of api.md's query
// rules): the same first value, the same duplicate refusal, the same
// presence, for every name the query holds.
func FuzzQueryLookupMatchesSplit(f *testing.F) {
	for _, s := range []string{"", "a=1&a=2", "k%65y=x&key=y", "a&b=&=c", "p+q=1&p%20q=2", "x=%zz", "&&&"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := parseQuery(raw)
		split := map[string][]string{}
		var splitErr error
		for _, pair := range strings.Split(raw, "&") {
			if pair == "" {
				continue
			}
			name, value, _ := strings.Cut(pair, "=")
			n, err := url.QueryUnescape(name)
			if err != nil {
				splitErr = err
				break
			}
			split[n] = append(split[n], value)
		}
		if (err == nil) != (splitErr == nil) {
			t.Fatalf("%q: parse error %v, split error %v", raw, err, splitErr)
		}
		if err != nil {
			return
		}
		for name, values := range split {
			first, n := q.lookup(name)
			if n != len(values) || first != values[0] || !q.has(name) {
				t.Fatalf("%q, %q: lookup %q x%d; split %q", raw, name, first, n, values)
			}
		}
		if q.has("\x00absent") {
			t.Fatalf("%q: has a name it does not hold", raw)
		}
	})
}
