package main

import (
	"fmt"
	"maps"
	"math"
	"slices"
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
	err := eachSample(exposition, callsMetric, func(labels string, v float64) (bool, error) {
		op, ok := labelValue(labels, "op")
		if !ok {
			return false, fmt.Errorf("%s: a series without an op label: {%s}", callsMetric, labels)
		}
		out[op] += v
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
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
