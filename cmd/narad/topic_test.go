package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/narad/narad/adapters/httpclient"
)

// lastBody returns the body of the broker's last request whose line starts with prefix.
func lastBody(t *testing.T, b *fakeBroker, prefix string) string {
	t.Helper()
	reqs := b.requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		if strings.HasPrefix(reqs[i].line, prefix) {
			return reqs[i].body
		}
	}
	t.Fatalf("no request %q among %d", prefix, len(reqs))
	return ""
}

// ensure that topic add turns flags into the create body (durations in ms) and prints the topic as JSON.
func TestTopicAdd(t *testing.T) {
	t.Parallel()
	schemaFile := filepath.Join(t.TempDir(), "s.json")
	if err := os.WriteFile(schemaFile, []byte(`{"type":"object"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		args  []string
		stdin string
		body  string
		code  int
	}{
		"defaults_only":                {args: []string{"orders"}, body: `{"name":"orders"}`},
		"durations_in_ms":              {args: []string{"orders", "--partitions", "6", "--retention", "24h", "--visibility", "45s", "--max-in-flight", "10", "--max-acked-ahead", "20"}, body: `{"name":"orders","partitions":6,"retention_ms":86400000,"visibility_timeout_ms":45000,"max_in_flight_per_partition":10,"max_acked_ahead_per_partition":20}`},
		"retention_in_days":            {args: []string{"orders", "--retention", "7d"}, body: `{"name":"orders","retention_ms":604800000}`},
		"retention_zero_means_default": {args: []string{"orders", "--retention", "0"}, body: `{"name":"orders"}`},
		"retention_forever":            {args: []string{"orders", "--retention", "forever"}, body: `{"name":"orders","retention_ms":0}`},
		"inline_schema":                {args: []string{"orders", "--schema", `{"type":"object"}`}, body: `{"name":"orders","schema":{"type":"object"}}`},
		"schema_from_file":             {args: []string{"orders", "--schema", "@" + schemaFile}, body: `{"name":"orders","schema":{"type":"object"}}`},
		"schema_from_stdin":            {args: []string{"orders", "--schema", "-"}, stdin: `true`, body: `{"name":"orders","schema":true}`},
		"delay_child":                  {args: []string{"late", "--parent", "orders", "--delay", "90s"}, body: `{"name":"late","parent":"orders","fanout_delay_ms":90000}`},
		"delay_needs_parent":           {args: []string{"late", "--delay", "90s"}, code: 2},
		"schema_not_json":              {args: []string{"orders", "--schema", "{"}, code: 2},
		"bad_duration":                 {args: []string{"orders", "--retention", "soon"}, code: 2},
		"negative_duration":            {args: []string{"orders", "--retention", "-1h"}, code: 2},
		"redelivery":                   {args: []string{"orders", "--redelivery-initial", "1s", "--redelivery-multiplier", "3", "--redelivery-max", "2m", "--redelivery-jitter", "0.25"}, body: `{"name":"orders","redelivery":{"initial_ms":1000,"multiplier":3,"max_ms":120000,"jitter":0.25}}`},
		"redelivery_defaults":          {args: []string{"orders", "--redelivery-initial", "500ms"}, body: `{"name":"orders","redelivery":{"initial_ms":500}}`},
		"redelivery_needs_initial":     {args: []string{"orders", "--redelivery-max", "2m"}, code: 2},
		"redelivery_initial_zero":      {args: []string{"orders", "--redelivery-initial", "0"}, code: 2},
		"redelivery_forever":           {args: []string{"orders", "--redelivery-initial", "forever"}, code: 2},
		"no_redelivery_is_edit_only":   {args: []string{"orders", "--no-redelivery"}, code: 2},
		"dead_letter":                  {args: []string{"orders", "--dead-letter-topic", "orders-dlq", "--max-receive-count", "5"}, body: `{"name":"orders","dead_letter":{"topic":"orders-dlq","max_receive_count":5}}`},
		"dead_letter_and_redelivery":   {args: []string{"orders", "--redelivery-initial", "1s", "--dead-letter-topic", "orders-dlq", "--max-receive-count", "3"}, body: `{"name":"orders","redelivery":{"initial_ms":1000},"dead_letter":{"topic":"orders-dlq","max_receive_count":3}}`},
		"dead_letter_needs_count":      {args: []string{"orders", "--dead-letter-topic", "orders-dlq"}, code: 2},
		"count_needs_dead_letter":      {args: []string{"orders", "--max-receive-count", "5"}, code: 2},
		"no_dead_letter_is_edit_only":  {args: []string{"orders", "--no-dead-letter"}, code: 2},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := newFakeBroker(t)
			r := runCLI(t, cliOpts{stdin: tc.stdin}, append([]string{"topic", "add", "-s", b.url()}, tc.args...)...)
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d: %s", r.code, tc.code, r.stderr)
			}
			if tc.code != 0 {
				if len(b.lines("POST")) != 0 {
					t.Fatal("a refused command sent a request")
				}
				return
			}
			if got := lastBody(t, b, "POST /v1/topics"); got != tc.body {
				t.Fatalf("body\n%s\nwant\n%s", got, tc.body)
			}
			var top httpclient.Topic
			if err := json.Unmarshal([]byte(r.stdout), &top); err != nil || top.Name != tc.args[0] {
				t.Fatalf("stdout is not the created topic: %v\n%s", err, r.stdout)
			}
		})
	}
}

// ensure that an existing name fails with the server's message.
func TestTopicAddConflict(t *testing.T) {
	t.Parallel()
	b := newFakeBroker(t)
	b.addTopic("orders", 3)
	r := runCLI(t, cliOpts{}, "topic", "add", "orders", "-s", b.url())
	if r.code != 1 || !strings.Contains(r.stderr, "narad: http 409: topic already exists") {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
}

// ensure that topic ls pages through every topic and prints a table, or JSON with --json.
func TestTopicLs(t *testing.T) {
	t.Parallel()
	b := newFakeBroker(t)
	b.addTopic("a", 3)
	b.addTopic("b", 6).meta.RetentionMs = 0
	b.addTopic("c", 3).meta.RetentionMs = 5400000
	r := runCLI(t, cliOpts{}, "topic", "ls", "-s", b.url())
	want := "NAME  PARTITIONS  RETENTION  ROLE\n" +
		"a     3           7d         standalone\n" +
		"b     6           forever    standalone\n" +
		"c     3           1h30m      standalone\n"
	if r.code != 0 || r.stdout != want {
		t.Fatalf("exit %d stdout\n%s\nwant\n%s\n%s", r.code, r.stdout, want, r.stderr)
	}
	if pages := b.lines("GET /v1/topics"); len(pages) != 2 || pages[1] != "GET /v1/topics?page_token=b" {
		t.Fatalf("pages %v", pages)
	}
	r = runCLI(t, cliOpts{}, "topics", "ls", "--json", "-s", b.url())
	var got []httpclient.Topic
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || len(got) != 3 || got[1].Partitions != 6 {
		t.Fatalf("json %v: %s", err, r.stdout)
	}
	empty := newFakeBroker(t)
	if r := runCLI(t, cliOpts{}, "topic", "ls", "--json", "-s", empty.url()); strings.TrimSpace(r.stdout) != "[]" {
		t.Fatalf("empty list printed %q", r.stdout)
	}
}

// ensure that topic info shows settings and partition statistics, marking unavailable partitions.
func TestTopicInfo(t *testing.T) {
	t.Parallel()
	b := newFakeBroker(t)
	ft := b.addTopic("pay", 3, []string{"a", "bb"}, []string{"ccc"})
	ft.parts[2].down = true
	ft.schemas = append(ft.schemas, json.RawMessage(`true`))
	ft.meta.Redelivery = json.RawMessage(`{"initial_ms":1500,"multiplier":2,"max_ms":600000,"jitter":0.2}`)
	ft.meta.DeadLetter = json.RawMessage(`{"topic":"pay-dlq","max_receive_count":5}`)
	ft.meta.Redrive = &httpclient.Redrive{ID: "00112233aabbccdd", State: "done", Moved: 40, Skipped: 2}
	r := runCLI(t, cliOpts{}, "topic", "info", "pay", "-s", b.url())
	for _, want := range []string{
		"name:                pay", "retention:           7d", "redelivery:          1.5s, then x2 up to 10m, jitter 0.2", "dead letter:         pay-dlq after 5 receives",
		"redrive:             00112233aabbccdd done, moved 40, skipped 2", "visibility timeout:  30s", "schema:              version 1",
		"0          n1     ok                  0       2               1         3 B",
		"2          n3     unavailable (dead)  -       -               -         -",
		"1 of 3 partitions unavailable",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
	r = runCLI(t, cliOpts{}, "topic", "info", "pay", "--json", "-s", b.url())
	var got httpclient.Topic
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || !got.Partial || len(got.PartitionStats) != 3 || got.PartitionStats[1].HighWatermark != 1 {
		t.Fatalf("json %v: %s", err, r.stdout)
	}
}

// ensure that topic edit sends only what changed, refuses --visibility and an empty change.
func TestTopicEdit(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		args []string
		body string
		code int
		msg  string
	}{
		"retention":            {args: []string{"--retention", "2h"}, body: `{"retention_ms":7200000}`},
		"retention_forever":    {args: []string{"--retention", "0"}, body: `{"retention_ms":0}`},
		"grow_and_caps":        {args: []string{"--partitions", "8", "--max-in-flight", "0", "--max-acked-ahead", "5"}, body: `{"max_in_flight_per_partition":0,"max_acked_ahead_per_partition":5,"partitions":8}`},
		"schema_with_base":     {args: []string{"--schema", `{"type":"object"}`, "--schema-base-version", "1"}, body: `{"schema":{"type":"object"},"schema_base_version":1}`},
		"base_version_stale":   {args: []string{"--schema", `true`, "--schema-base-version", "3"}, code: 1, msg: "http 409: schema version conflict"},
		"visibility_refused":   {args: []string{"--visibility", "1m"}, code: 2, msg: "--visibility cannot be changed"},
		"nothing_to_change":    {args: []string{}, code: 2, msg: "nothing to change"},
		"base_without_schema":  {args: []string{"--schema-base-version", "1"}, code: 2, msg: "needs --schema"},
		"redelivery":           {args: []string{"--redelivery-initial", "2s", "--redelivery-max", "1m"}, body: `{"redelivery":{"initial_ms":2000,"max_ms":60000}}`},
		"no_redelivery":        {args: []string{"--no-redelivery"}, body: `{"redelivery":null}`},
		"no_redelivery_mixed":  {args: []string{"--no-redelivery", "--redelivery-initial", "1s"}, code: 2, msg: "cannot be combined"},
		"jitter_alone":         {args: []string{"--redelivery-jitter", "0.5"}, code: 2, msg: "need --redelivery-initial"},
		"dead_letter":          {args: []string{"--dead-letter-topic", "t-dlq", "--max-receive-count", "10"}, body: `{"dead_letter":{"topic":"t-dlq","max_receive_count":10}}`},
		"no_dead_letter":       {args: []string{"--no-dead-letter", "--no-redelivery"}, body: `{"redelivery":null,"dead_letter":null}`},
		"no_dead_letter_mixed": {args: []string{"--no-dead-letter", "--max-receive-count", "3"}, code: 2, msg: "cannot be combined"},
		"dead_letter_alone":    {args: []string{"--dead-letter-topic", "t-dlq"}, code: 2, msg: "--dead-letter-topic needs --max-receive-count"},
		"count_alone":          {args: []string{"--max-receive-count", "3"}, code: 2, msg: "--max-receive-count needs --dead-letter-topic"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := newFakeBroker(t)
			b.addTopic("t", 3).schemas = []json.RawMessage{json.RawMessage(`true`)}
			r := runCLI(t, cliOpts{}, append([]string{"topic", "edit", "t", "-s", b.url()}, tc.args...)...)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.msg) {
				t.Fatalf("exit %d stderr %q, want %d %q", r.code, r.stderr, tc.code, tc.msg)
			}
			if tc.body != "" {
				if got := lastBody(t, b, "PATCH /v1/topics/t"); got != tc.body {
					t.Fatalf("body %s, want %s", got, tc.body)
				}
			}
		})
	}
}

// ensure that topic schema prints the history, and --current the current schema or "no schema".
func TestTopicSchema(t *testing.T) {
	t.Parallel()
	b := newFakeBroker(t)
	b.addTopic("s", 3).schemas = []json.RawMessage{json.RawMessage(`{"type":"object"}`), json.RawMessage(`true`)}
	b.addTopic("plain", 3)
	cases := map[string]struct {
		args []string
		want string
	}{
		"history":           {args: []string{"s"}, want: "\"version\": 2,\n  \"versions\": ["},
		"current":           {args: []string{"s", "--current"}, want: "true\n"},
		"no_schema_current": {args: []string{"plain", "--current"}, want: "no schema\n"},
		"no_schema_history": {args: []string{"plain"}, want: `"versions": []`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := runCLI(t, cliOpts{}, append([]string{"topic", "schema", "-s", b.url()}, tc.args...)...)
			if r.code != 0 || !strings.Contains(r.stdout, tc.want) {
				t.Fatalf("exit %d stdout %q, want %q", r.code, r.stdout, tc.want)
			}
		})
	}
}

// ensure that topic rm asks first, deletes only on yes, skips the prompt with -f and never sends force.
func TestTopicRm(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		args    []string
		stdin   string
		code    int
		deleted bool
		prompt  bool
	}{
		"answer_yes":      {stdin: "y\n", deleted: true, prompt: true},
		"answer_yes_word": {stdin: "YES\n", deleted: true, prompt: true},
		"answer_no":       {stdin: "n\n", code: 1, prompt: true},
		"no_answer":       {stdin: "", code: 1, prompt: true},
		"force":           {args: []string{"-f"}, deleted: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := newFakeBroker(t)
			b.addTopic("doomed", 3)
			r := runCLI(t, cliOpts{stdin: tc.stdin}, append([]string{"topic", "rm", "doomed", "-s", b.url()}, tc.args...)...)
			if r.code != tc.code {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			if got := strings.Contains(r.stderr, `delete topic "doomed" and all its data? [y/N] `); got != tc.prompt {
				t.Fatalf("prompted %v: %q", got, r.stderr)
			}
			if dels := b.lines("DELETE"); (len(dels) == 1) != tc.deleted || (tc.deleted && dels[0] != "DELETE /v1/topics/doomed") {
				t.Fatalf("deletes %v", dels)
			}
		})
	}
}
