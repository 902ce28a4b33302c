package main

import (
	"bufio"
	"bytes"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// callsMetric counts the node-to-node requests a node sent, by operation and
// outcome (api.md §7, docs/metrics.md).
const callsMetric = "narad_cluster_rpc_requests_total"

// callsShownMinPerMsg: operations with fewer calls per message than this
// are left out of the table (the JSON keeps every one).
const callsShownMinPerMsg = 0.005

// callsByOp sums callsMetric's series in an exposition by their op label,
// every outcome together. A node that never sent a request has no series:
// an empty map, not an error.
func callsByOp(exposition []byte) (map[string]float64, error) {
	out := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(exposition))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), callsMetric+"{")
		if !ok {
			continue
		}
		labels, value, ok := strings.Cut(rest, "}")
		op, found := labelValue(labels, "op")
		f := strings.Fields(value)
		if !ok || !found || len(f) == 0 {
			return nil, fmt.Errorf("%s: unreadable line %q", callsMetric, sc.Text())
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			return nil, fmt.Errorf("%s: value %q: %v", callsMetric, f[0], err)
		}
		out[op] += v
	}
	return out, sc.Err()
}

// labelValue finds name="value" in a series' label list (values without
// escaped quotes, as operation names are).
func labelValue(labels, name string) (string, bool) {
	for _, kv := range strings.Split(labels, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if ok && k == name {
			return strings.Trim(v, `"`), true
		}
	}
	return "", false
}

// callsPerMessage divides the calls every node counted between two readings
// (summed by operation over the nodes read both times: read[i]) by msgs.
// Nil without calls (a single node sends none) or without messages.
func callsPerMessage(before, after []map[string]float64, read []bool, msgs int) (map[string]float64, *float64) {
	if msgs <= 0 {
		return nil, nil
	}
	per, total := map[string]float64{}, 0.0
	for i := range read {
		if !read[i] {
			continue
		}
		for op, a := range after[i] {
			if d := a - before[i][op]; d > 0 {
				per[op] += d / float64(msgs)
				total += d / float64(msgs)
			}
		}
	}
	if total == 0 {
		return nil, nil
	}
	for op, v := range per {
		per[op] = math.Round(v*1e4) / 1e4
	}
	total = math.Round(total*1e4) / 1e4
	return per, &total
}

// printCalls writes the node-to-node calls line of the table.
func printCalls(tw *tabwriter.Writer, r *benchCPUReport) {
	if r == nil || r.CallsPerMsg == nil {
		return
	}
	var parts []string
	for _, op := range slices.Sorted(maps.Keys(r.CallsPerMsg)) {
		if v := r.CallsPerMsg[op]; v >= callsShownMinPerMsg {
			parts = append(parts, fmt.Sprintf("%s %.2f", op, v))
		}
	}
	fmt.Fprintf(tw, "node-to-node calls\t%.2f per message: %s\n", *r.CallsPerMsgTotal, strings.Join(parts, ", "))
}
