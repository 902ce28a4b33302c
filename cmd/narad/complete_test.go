package main

import (
	"strings"
	"testing"
)

// ensure that the commands taking an existing topic complete its name from
// the server's list, filtered by what was typed, and that nothing is
// offered without a server or for a later argument (issue 17).
func TestTopicNameCompletion(t *testing.T) {
	t.Parallel()
	b := newFakeBroker(t)
	b.addTopic("orders", 1)
	b.addTopic("orders-dlq", 1)
	b.addTopic("billing", 1)
	cases := map[string]struct {
		args []string
		want []string
	}{
		"sub":               {args: []string{"sub", "ord"}, want: []string{"orders", "orders-dlq"}},
		"pub":               {args: []string{"pub", "b"}, want: []string{"billing"}},
		"replay":            {args: []string{"replay", ""}, want: []string{"billing", "orders", "orders-dlq"}},
		"topic_info":        {args: []string{"topic", "info", "orders-"}, want: []string{"orders-dlq"}},
		"topic_rm":          {args: []string{"topic", "rm", "bil"}, want: []string{"billing"}},
		"moves_abort":       {args: []string{"cluster", "moves", "abort", "o"}, want: []string{"orders", "orders-dlq"}},
		"second_argument":   {args: []string{"pub", "orders", ""}},
		"topic_add_is_new":  {args: []string{"topic", "add", "o"}},
		"no_server_answers": {args: []string{"sub", "-s", "http://127.0.0.1:1", ""}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			args := append([]string{"__complete", "-s", b.url()}, tc.args...)
			r := runCLI(t, cliOpts{}, args...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			var got []string
			for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
				if line != "" && !strings.HasPrefix(line, ":") {
					got = append(got, line)
				}
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Fatalf("completions %q, want %q\n%s", got, tc.want, r.stdout)
			}
		})
	}
}
