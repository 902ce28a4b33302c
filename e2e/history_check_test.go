package e2e

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

const (
	// historyCheckTimeout bounds porcupine's search; Unknown fails the
	// test like a violation (§15.1 verdict UNKNOWN).
	historyCheckTimeout = 2 * time.Minute
	// historyShownParts bounds the parts drawn in the visualization.
	historyShownParts = 20
)

// historyRecord is what a history file holds: the topology (which paths a
// message produced to the parent must reach, and their delays), the
// faults, then the operations, one JSON value per line.
type historyRecord struct {
	Paths  []string                 `json:"paths"`
	Delays map[string]time.Duration `json:"delays_ns,omitempty"`
	Faults []histFault              `json:"faults"`
}

// historyVerdict is the outcome of a check.
type historyVerdict struct {
	Result  porcupine.CheckResult
	Parts   int                     // (path, message, copy) parts checked
	Failing [][]porcupine.Operation // parts with no valid order, first historyShownParts
	Bad     int                     // how many parts failed
}

// checkContract runs porcupine over ops with m and, when the history is
// not linearizable, finds the parts that are not.
func checkContract(m contractModel, ops []porcupine.Operation) historyVerdict {
	model := m.porcupineModel()
	v := historyVerdict{Result: porcupine.CheckOperationsTimeout(model, ops, historyCheckTimeout)}
	parts := partitionHistory(ops)
	v.Parts = len(parts)
	if v.Result == porcupine.Ok {
		return v
	}
	single := model
	single.Partition = nil
	for _, p := range parts {
		if porcupine.CheckOperationsTimeout(single, p, historyCheckTimeout) != porcupine.Ok {
			v.Bad++
			if len(v.Failing) < historyShownParts {
				v.Failing = append(v.Failing, p)
			}
		}
	}
	return v
}

// writeViolations renders the failing parts with porcupine's
// visualization (faults drawn as annotations) and writes their operations
// as JSON; it returns the two files' paths.
func writeViolations(dir string, m contractModel, v historyVerdict) (html, js string, err error) {
	var subset []porcupine.Operation
	for _, p := range v.Failing {
		subset = append(subset, p...)
	}
	model := m.porcupineModel()
	_, info := porcupine.CheckOperationsVerbose(model, subset, historyCheckTimeout)
	var notes []porcupine.Annotation
	for _, f := range m.faults {
		notes = append(notes, porcupine.Annotation{Tag: "faults", Start: f.Start, End: f.End,
			Description: fmt.Sprintf("%s n%d", f.Kind, f.Node), BackgroundColor: "#f7c6c6"})
	}
	info.AddAnnotations(notes)
	html = filepath.Join(dir, "history-violations.html")
	if err := porcupine.VisualizePath(model, info, html); err != nil {
		return "", "", err
	}
	parts := make([][]histOp, len(v.Failing))
	for i, p := range v.Failing {
		for _, op := range p {
			parts[i] = append(parts[i], op.Input.(histOp))
		}
	}
	js = filepath.Join(dir, "history-violations.json")
	b, err := json.MarshalIndent(struct {
		Faults []histFault `json:"faults"`
		Parts  [][]histOp  `json:"parts"`
	}{m.faults, parts}, "", " ")
	if err != nil {
		return "", "", err
	}
	return html, js, os.WriteFile(js, b, 0o644)
}

// writeHistory writes the whole history as JSON lines: the record first.
func writeHistory(path string, rec historyRecord, ops []histOp) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	if err := enc.Encode(rec); err != nil {
		f.Close()
		return err
	}
	for _, op := range ops {
		if err := enc.Encode(op); err != nil {
			f.Close()
			return err
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// historyArtifacts is where a failing (or, with -artifacts, every)
// history is kept: the test's artifact directory under -artifacts, else a
// directory under the system's temp dir that outlives the test.
func historyArtifacts(t *testing.T) string {
	t.Helper()
	if historyKeepArtifacts() {
		return t.ArtifactDir()
	}
	dir, err := os.MkdirTemp("", "narad-e2e-history-")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// historyKeepArtifacts reports whether the run asked for artifacts (-artifacts).
func historyKeepArtifacts() bool {
	f := flag.Lookup("test.artifacts")
	return f != nil && f.Value.String() == "true"
}

// postAckRedeliveries counts, per copy, deliveries that began after an ack
// of that copy had returned 204, and the largest time from such an ack's
// answer to the start of the kill after it (0 when none).
func postAckRedeliveries(ops []histOp, faults []histFault) (n int, widest time.Duration) {
	byCopy := map[string][]histOp{}
	for _, op := range ops {
		if op.Copy != "" {
			byCopy[op.Path+"/"+op.Copy] = append(byCopy[op.Path+"/"+op.Copy], op)
		}
	}
	for _, list := range byCopy {
		sort.Slice(list, func(i, j int) bool { return list[i].Call < list[j].Call })
		ackRet := int64(-1)
		for _, op := range list {
			switch {
			case op.Kind == kindAck && op.Outcome == outcomeOK:
				ackRet = op.Ret
			case op.Kind == kindDeliver && ackRet >= 0 && op.Call > ackRet:
				n++
				for _, f := range faults {
					if f.Kind == "kill" && f.Start >= ackRet && f.Start <= op.Ret {
						widest = max(widest, time.Duration(f.Start-ackRet))
						break
					}
				}
				ackRet = -1
			}
		}
	}
	return n, widest
}

// histOutcomeCounts tallies operations by kind and outcome, for the log.
func histOutcomeCounts(ops []histOp) string {
	m := map[string]int{}
	for _, op := range ops {
		k := fmt.Sprintf("%s %s", op.Kind, op.Outcome)
		if op.Outcome != outcomeOK {
			k = fmt.Sprintf("%s %s(%d)", op.Kind, op.Outcome, op.Status)
		}
		m[k]++
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s: %d", k, m[k])
	}
	return b.String()
}
