package main

import (
	"strings"
	"testing"
)

// ensure that the commands taking an existing topic complete its name from
// the server's list, filtered by what was typed, the child of detach,
// pause, resume and skip from the parent's children, and that nothing is
// offered without a server or for a later argument (issue 17).
func TestTopicNameCompletion(t *testing.T) {
	t.Parallel()
	b := newFakeBroker(t)
	b.addTopic("orders", 1)
	b.addTopic("orders-dlq", 1)
	b.addTopic("billing", 1)
	parent := b.addTopic("pay", 1)
	b.mu.Lock()
	parent.meta.Children = []string{"pay-eu", "pay-late", "refunds"}
	b.mu.Unlock()
	cases := map[string]struct {
		args []string
		want []string
	}{
		"sub":               {args: []string{"sub", "ord"}, want: []string{"orders", "orders-dlq"}},
		"pub":               {args: []string{"pub", "b"}, want: []string{"billing"}},
		"replay":            {args: []string{"replay", ""}, want: []string{"billing", "orders", "orders-dlq", "pay"}},
		"topic_info":        {args: []string{"topic", "info", "orders-"}, want: []string{"orders-dlq"}},
		"topic_rm":          {args: []string{"topic", "rm", "bil"}, want: []string{"billing"}},
		"moves_abort":       {args: []string{"cluster", "moves", "abort", "o"}, want: []string{"orders", "orders-dlq"}},
		"second_argument":   {args: []string{"pub", "orders", ""}},
		"topic_add_is_new":  {args: []string{"topic", "add", "o"}},
		"no_server_answers": {args: []string{"sub", "-s", "http://127.0.0.1:1", ""}},
		"attach_parent":     {args: []string{"topic", "attach", "o"}, want: []string{"orders", "orders-dlq"}},
		"attach_child":      {args: []string{"topic", "attach", "orders", "b"}, want: []string{"billing"}},
		"detach_child":      {args: []string{"topic", "detach", "pay", "pay-"}, want: []string{"pay-eu", "pay-late"}},
		"pause_child":       {args: []string{"topic", "pause", "pay", ""}, want: []string{"pay-eu", "pay-late", "refunds"}},
		"resume_parent":     {args: []string{"topic", "resume", "p"}, want: []string{"pay"}},
		"skip_child":        {args: []string{"topic", "skip", "pay", "r"}, want: []string{"refunds"}},
		"skip_third":        {args: []string{"topic", "skip", "pay", "pay-eu", ""}},
		"child_no_parent":   {args: []string{"topic", "detach", "nope", ""}},
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
