package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/narad/narad/adapters/httpclient"
)

// cpuMetric is the standard process collector's counter of the node's CPU
// time, user + system, in seconds (api.md §2.3, §7).
const cpuMetric = "process_cpu_seconds_total"

// scrapeTimeout bounds one round of reading every node's counter.
const scrapeTimeout = 5 * time.Second

// metricsTarget is where one node's CPU counter is read.
type metricsTarget struct {
	url       string
	onAPIPort bool // derived from a server address, not given with --metrics
}

// metricsTargets are the URLs given with --metrics (a bare base URL gets
// /metrics), else /metrics on each distinct server.
func metricsTargets(servers, given []string) ([]metricsTarget, error) {
	var out []metricsTarget
	add := func(t metricsTarget) {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	for _, g := range given {
		u, err := url.Parse(g)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, usagef("--metrics: %q is not an http(s) URL such as http://host:9100/metrics", g)
		}
		if u.Path == "" || u.Path == "/" {
			u.Path = "/metrics"
		}
		add(metricsTarget{url: u.String()})
	}
	if len(given) > 0 {
		return out, nil
	}
	for _, s := range servers {
		add(metricsTarget{url: s + "/metrics", onAPIPort: true})
	}
	return out, nil
}

// warnPlainMetrics warns, like newClient does for servers, before the
// run's credentials go in the clear to a --metrics URL off this machine.
func warnPlainMetrics(e *env, t target, targets []metricsTarget) {
	if t.user == "" {
		return
	}
	for _, mt := range targets {
		if u, err := url.Parse(mt.url); err == nil && !mt.onAPIPort && u.Scheme == "http" && !isLocalHost(u.Hostname()) {
			fmt.Fprintf(e.stderr, "narad: warning: sending credentials over plain http:// to %s (--metrics); use https:// beyond this machine\n", u.Host)
		}
	}
}

// cpuSample is one reading of every target's counter.
type cpuSample struct {
	at      time.Time
	targets []metricsTarget
	seconds []float64
	calls   []map[string]float64 // node-to-node requests sent, by operation
	errs    []error
}

// scrapeCPU reads every target's CPU counter and node-to-node request
// counters, all at once, within scrapeTimeout.
func scrapeCPU(ctx context.Context, cl *httpclient.Client, targets []metricsTarget) cpuSample {
	ctx, cancel := context.WithTimeout(ctx, scrapeTimeout)
	defer cancel()
	s := cpuSample{targets: targets, seconds: make([]float64, len(targets)), calls: make([]map[string]float64, len(targets)),
		errs: make([]error, len(targets))}
	var wg sync.WaitGroup
	for i, t := range targets {
		wg.Go(func() {
			body, err := cl.Scrape(ctx, t.url)
			if err == nil {
				s.seconds[i], err = cpuSeconds(body)
			}
			if err == nil {
				s.calls[i], err = callsByOp(body)
			}
			s.errs[i] = explainScrape(t, err)
		})
	}
	wg.Wait()
	s.at = time.Now()
	return s
}

// explainScrape adds what an unreadable counter most likely means.
func explainScrape(t metricsTarget, err error) error {
	switch st := httpclient.StatusOf(err); {
	case err == nil:
		return nil
	case st == 401 || st == 403:
		return fmt.Errorf("%w (the run's credentials were refused)", err)
	case st == 404 && t.onAPIPort:
		return fmt.Errorf("%w (metrics on their own listener? name it with --metrics)", err)
	}
	return err
}

// cpuSeconds finds cpuMetric's value in a Prometheus text exposition.
func cpuSeconds(exposition []byte) (float64, error) { return seriesValue(exposition, cpuMetric) }

// seriesValue finds the value of the first series named name (labels or
// none) in a Prometheus text exposition.
func seriesValue(exposition []byte, name string) (float64, error) {
	var v float64
	found := false
	err := eachSample(exposition, name, func(_ string, x float64) (bool, error) {
		v, found = x, true
		return false, nil
	})
	switch {
	case err != nil:
		return 0, err
	case !found:
		return 0, errors.New("no " + name + " in the metrics")
	}
	return v, nil
}

// eachSample calls visit with the label list (without braces; "" when
// none) and the value of every sample of the series named name in a
// Prometheus text exposition, in order, until visit answers false or an
// error. A sample line it cannot read is an error.
func eachSample(exposition []byte, name string, visit func(labels string, value float64) (bool, error)) error {
	sc := bufio.NewScanner(bytes.NewReader(exposition))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		rest, ok := strings.CutPrefix(line, name)
		if !ok || (rest != "" && rest[0] != ' ' && rest[0] != '\t' && rest[0] != '{') {
			continue // a comment, another series, or a longer name
		}
		labels := ""
		if strings.HasPrefix(rest, "{") {
			end := strings.LastIndexByte(rest, '}')
			if end < 0 {
				return fmt.Errorf("%s: unreadable line %q", name, line)
			}
			labels, rest = rest[1:end], rest[end+1:]
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			return fmt.Errorf("%s: no value in %q", name, line)
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			return fmt.Errorf("%s: value %q: %v", name, f[0], err)
		}
		if more, err := visit(labels, v); err != nil || !more {
			return err
		}
	}
	return sc.Err()
}

// benchCPUReport is the nodes' CPU over a run: the difference of two
// readings of each node's counter, summed over the nodes read both times.
type benchCPUReport struct {
	// Seconds is null when no node's counter could be read twice.
	Seconds       *float64 `json:"seconds"`
	WindowSeconds float64  `json:"window_seconds"` // wall time between the two readings
	// UsPerMsgProduced is µs of node CPU per message accepted.
	UsPerMsgProduced *float64 `json:"us_per_msg_produced"`
	// UsPerMsgFullFlow is µs of node CPU per message produced, consumed and
	// acked; present with consumers.
	UsPerMsgFullFlow *float64       `json:"us_per_msg_full_flow,omitempty"`
	NodesRead        int            `json:"nodes_read"`
	Nodes            []benchNodeCPU `json:"nodes"`
	// CallsPerMsg is the node-to-node requests the nodes read sent during
	// the run, by operation, per message through the full flow (per
	// message produced without consumers); absent when they sent none.
	CallsPerMsg      map[string]float64 `json:"node_calls_per_msg,omitempty"`
	CallsPerMsgTotal *float64           `json:"node_calls_per_msg_total,omitempty"`
}

// benchNodeCPU is one node's part: its CPU seconds, or why it is missing.
type benchNodeCPU struct {
	Metrics string   `json:"metrics"`
	Seconds *float64 `json:"seconds,omitempty"`
	Error   string   `json:"error,omitempty"`
}

// nodeCPU computes the report from readings before and after the run.
func nodeCPU(before, after cpuSample, rep benchReport) *benchCPUReport {
	r := &benchCPUReport{WindowSeconds: after.at.Sub(before.at).Seconds(), Nodes: make([]benchNodeCPU, len(before.targets))}
	total, read := 0.0, make([]bool, len(before.targets))
	for i, t := range before.targets {
		n := benchNodeCPU{Metrics: t.url}
		switch b, a := before.seconds[i], after.seconds[i]; {
		case before.errs[i] != nil:
			n.Error = "before the run: " + before.errs[i].Error()
		case after.errs[i] != nil:
			n.Error = "after the run: " + after.errs[i].Error()
		case a < b:
			n.Error = fmt.Sprintf("%s went back from %g to %g: the node restarted during the run", cpuMetric, b, a)
		default:
			d := math.Round((a-b)*1e6) / 1e6 // drop float noise: the counter moves in clock ticks
			n.Seconds = &d
			total += d
			r.NodesRead++
			read[i] = true
		}
		r.Nodes[i] = n
	}
	if r.NodesRead == 0 {
		return r
	}
	r.Seconds = &total
	r.UsPerMsgProduced = perMessage(total, rep.Produced)
	msgs := rep.Produced
	if c := rep.Consume; c != nil {
		r.UsPerMsgFullFlow = perMessage(total, c.Consumed-c.Unconfirmed)
		msgs = c.Consumed - c.Unconfirmed
	}
	r.CallsPerMsg, r.CallsPerMsgTotal = callsPerMessage(before.calls, after.calls, read, msgs)
	return r
}

// perMessage is µs of secs per message, nil without messages.
func perMessage(secs float64, msgs int) *float64 {
	if msgs <= 0 {
		return nil
	}
	us := secs * 1e6 / float64(msgs)
	return &us
}

// printCPU writes the node CPU lines of the table.
func printCPU(tw *tabwriter.Writer, r *benchCPUReport) {
	if r == nil {
		return
	}
	if r.Seconds == nil {
		fmt.Fprintf(tw, "node CPU\tnot measured: no node's %s could be read\n", cpuMetric)
	} else {
		line := fmt.Sprintf("%.2fs on %d of %d node(s) in %.2fs (%.2f cores)", *r.Seconds, r.NodesRead, len(r.Nodes), r.WindowSeconds, *r.Seconds/max(r.WindowSeconds, 1e-9))
		if r.UsPerMsgProduced != nil {
			line += fmt.Sprintf(": %.1fµs per message produced", *r.UsPerMsgProduced)
		}
		if r.UsPerMsgFullFlow != nil {
			line += fmt.Sprintf(", %.1fµs per message through the full flow", *r.UsPerMsgFullFlow)
		}
		fmt.Fprintf(tw, "node CPU\t%s\n", line)
	}
	if len(r.Nodes) > 1 {
		var parts []string
		for _, n := range r.Nodes {
			if n.Seconds != nil {
				parts = append(parts, fmt.Sprintf("%s %.2fs", n.Metrics, *n.Seconds))
			}
		}
		if len(parts) > 0 {
			fmt.Fprintf(tw, "node CPU by node\t%s\n", strings.Join(parts, ", "))
		}
	}
	printCalls(tw, r)
	for _, n := range r.Nodes {
		if n.Error != "" {
			fmt.Fprintf(tw, "metrics unreadable\t%s: %s\n", n.Metrics, n.Error)
		}
	}
}
