package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// histAt builds a recorded operation on path p for the model cases; times in
// milliseconds.
func histAt(kind histKind, id, copy, handle string, call, ret int64, out histOutcome) histOp {
	return histOp{Kind: kind, ID: id, Path: "p", Copy: copy, Handle: handle, Node: 1,
		Call: call * int64(time.Millisecond), Ret: ret * int64(time.Millisecond), Outcome: out}
}

// onPath moves a recorded operation to another path.
func onPath(path string, o histOp) histOp {
	o.Path = path
	return o
}

// ensure that the delivery-contract model accepts the histories internals.md §1 allows (ambiguous produces, redelivery after a lapse or a nack, late acks answered 410, second copies, a forgotten ack just before a kill) and rejects the ones it forbids (loss, a delivery never produced or refused, an ack or nack of a superseded lease answered 204, redelivery after a confirmed ack without a kill, a delay child early).
func TestHistoryModelVerdicts(t *testing.T) {
	const ok, refused, ambiguous = outcomeOK, outcomeRefused, outcomeAmbiguous
	produce := histAt(kindProduce, "m", "", "", 0, 10, ok)
	deliver1 := histAt(kindDeliver, "m", "0:1", "0:1:1", 20, 30, ok)
	ack1 := histAt(kindAck, "m", "0:1", "0:1:1", 40, 50, ok)
	redeliver := histAt(kindDeliver, "m", "0:1", "0:1:2", 60, 70, ok)
	killAt := func(startMs int64) []histFault {
		ns := startMs * int64(time.Millisecond)
		return []histFault{{Node: 1, Kind: "kill", Start: ns, Down: ns + 1, End: ns + int64(3*time.Second)}}
	}
	for _, c := range []struct {
		name   string
		ops    []histOp
		faults []histFault
		delays map[string]time.Duration
		paths  []string
		want   porcupine.CheckResult
	}{
		{name: "produce, deliver, ack", ops: []histOp{produce, deliver1, ack1}, want: porcupine.Ok},
		{name: "accepted and never delivered", ops: []histOp{produce}, want: porcupine.Illegal},
		{name: "ambiguous produce never delivered", ops: []histOp{histAt(kindProduce, "m", "", "", 0, 10, ambiguous)}, want: porcupine.Ok},
		{name: "ambiguous produce delivered after its error", ops: []histOp{histAt(kindProduce, "m", "", "", 0, 10, ambiguous),
			histAt(kindDeliver, "m", "0:1", "0:1:1", 900, 910, ok)}, want: porcupine.Ok},
		{name: "delivered, never produced", ops: []histOp{histAt(kindDeliver, "x", "0:1", "0:1:1", 20, 30, ok)}, want: porcupine.Illegal},
		{name: "refused produce delivered", ops: []histOp{histAt(kindProduce, "m", "", "", 0, 10, refused), deliver1}, want: porcupine.Illegal},
		{name: "delivered before the 202 returned", ops: []histOp{histAt(kindProduce, "m", "", "", 0, 100, ok),
			histAt(kindDeliver, "m", "0:1", "0:1:1", 10, 20, ok)}, want: porcupine.Ok},
		{name: "lapse, redelivery, late ack 410", ops: []histOp{produce, deliver1, histAt(kindDeliver, "m", "0:1", "0:1:2", 6000, 6010, ok),
			histAt(kindAck, "m", "0:1", "0:1:1", 6100, 6110, refused), histAt(kindAck, "m", "0:1", "0:1:2", 6100, 6110, ok)}, want: porcupine.Ok},
		{name: "ack 204 of a superseded histLease", ops: []histOp{produce, deliver1, histAt(kindDeliver, "m", "0:1", "0:1:2", 100, 110, ok),
			histAt(kindAck, "m", "0:1", "0:1:1", 200, 210, ok)}, want: porcupine.Illegal},
		{name: "redelivery after a confirmed ack", ops: []histOp{produce, deliver1, ack1, redeliver}, want: porcupine.Illegal},
		{name: "redelivery after an ack just before a kill", ops: []histOp{produce, deliver1, ack1, redeliver}, faults: killAt(55), want: porcupine.Ok},
		{name: "redelivery after an ack long before a kill", ops: []histOp{produce, deliver1, ack1,
			histAt(kindDeliver, "m", "0:1", "0:1:2", 9000, 9010, ok)}, faults: killAt(5000), want: porcupine.Illegal},
		{name: "redelivery after a network cut", ops: []histOp{produce, deliver1, ack1, redeliver},
			faults: []histFault{{Node: 1, Kind: "cut", Start: 55e6, Down: 55e6, End: 58e6}}, want: porcupine.Illegal},
		{name: "redelivery after an ambiguous ack", ops: []histOp{produce, deliver1, histAt(kindAck, "m", "0:1", "0:1:1", 40, 50, ambiguous), redeliver}, want: porcupine.Ok},
		{name: "redelivery after an ack answered 503", ops: []histOp{produce, deliver1, histAt(kindAck, "m", "0:1", "0:1:1", 40, 50, refused), redeliver}, want: porcupine.Ok},
		{name: "nack, redelivery, ack", ops: []histOp{produce, deliver1, histAt(kindNack, "m", "0:1", "0:1:1", 40, 50, ok), redeliver,
			histAt(kindAck, "m", "0:1", "0:1:2", 80, 90, ok)}, want: porcupine.Ok},
		{name: "nack 204 of a superseded histLease", ops: []histOp{produce, deliver1, histAt(kindDeliver, "m", "0:1", "0:1:2", 100, 110, ok),
			histAt(kindNack, "m", "0:1", "0:1:1", 200, 210, ok)}, want: porcupine.Illegal},
		{name: "extend then ack", ops: []histOp{produce, deliver1, histAt(kindExtend, "m", "0:1", "0:1:1", 40, 50, ok),
			histAt(kindAck, "m", "0:1", "0:1:1", 60, 70, ok)}, want: porcupine.Ok},
		{name: "second copy after an ack", ops: []histOp{produce, deliver1, ack1, histAt(kindDeliver, "m", "2:7", "2:7:1", 60, 70, ok)}, want: porcupine.Ok},
		{name: "delay child on time", paths: []string{"p", "d"}, delays: map[string]time.Duration{"d": 1500 * time.Millisecond},
			ops: []histOp{produce, deliver1, onPath("d", histAt(kindDeliver, "m", "1:1", "1:1:1", 1600, 1610, ok))}, want: porcupine.Ok},
		{name: "delay child early", paths: []string{"p", "d"}, delays: map[string]time.Duration{"d": 1500 * time.Millisecond},
			ops: []histOp{produce, deliver1, onPath("d", histAt(kindDeliver, "m", "1:1", "1:1:1", 1000, 1010, ok))}, want: porcupine.Illegal},
		{name: "delay child never delivered", paths: []string{"p", "d"}, delays: map[string]time.Duration{"d": 1500 * time.Millisecond},
			ops: []histOp{produce, deliver1}, want: porcupine.Illegal},
	} {
		paths := c.paths
		if paths == nil {
			paths = []string{"p"}
		}
		m := contractModel{delays: c.delays, faults: c.faults}
		if v := checkContract(m, histOperations(c.ops, paths)); v.Result != c.want {
			t.Errorf("%s: %s, want %s", c.name, v.Result, c.want)
		} else if c.want == porcupine.Illegal && v.Bad == 0 {
			t.Errorf("%s: illegal, but no failing part found", c.name)
		}
	}
}

// ensure that a failing history is written as porcupine's visualization and a JSON of the failing parts' operations, and the whole history as JSON lines, and that post-ack redeliveries are counted with their gap to the kill.
func TestHistoryViolationArtifacts(t *testing.T) {
	ops := []histOp{
		histAt(kindProduce, "lost", "", "", 0, 10, outcomeOK),
		histAt(kindProduce, "m", "", "", 0, 10, outcomeOK),
		histAt(kindDeliver, "m", "0:1", "0:1:1", 20, 30, outcomeOK),
		histAt(kindAck, "m", "0:1", "0:1:1", 40, 50, outcomeOK),
		histAt(kindDeliver, "m", "0:1", "0:1:2", 60, 70, outcomeOK),
	}
	faults := []histFault{{Node: 2, Kind: "kill", Start: 55e6, Down: 56e6, End: 58e6}}
	if n, widest := postAckRedeliveries(ops, faults); n != 1 || widest != 5*time.Millisecond {
		t.Fatalf("post-ack redeliveries %d, widest gap %s; want 1 and 5ms", n, widest)
	}
	m := contractModel{}
	v := checkContract(m, histOperations(ops, []string{"p"}))
	if v.Result != porcupine.Illegal || v.Bad != 2 || v.Parts != 2 {
		t.Fatalf("verdict %s, %d of %d parts failing; want Illegal, 2 of 2", v.Result, v.Bad, v.Parts)
	}
	dir := t.TempDir()
	html, js, err := writeViolations(dir, contractModel{faults: faults}, v)
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(html)
	if err != nil || !strings.Contains(string(page), "<html") || !strings.Contains(string(page), "kill n2") {
		t.Fatalf("visualization %s: %v, %d bytes", html, err, len(page))
	}
	var got struct {
		Faults []histFault `json:"faults"`
		Parts  [][]histOp  `json:"parts"`
	}
	b, err := os.ReadFile(js)
	if err != nil || json.Unmarshal(b, &got) != nil || len(got.Parts) != 2 || len(got.Faults) != 1 {
		t.Fatalf("violations %s: %v\n%s", js, err, b)
	}
	file := filepath.Join(dir, "history.jsonl")
	if err := writeHistory(file, historyRecord{Paths: []string{"p"}, Faults: faults}, ops); err != nil {
		t.Fatal(err)
	}
	b, err = os.ReadFile(file)
	if lines := strings.Count(string(b), "\n"); err != nil || lines != len(ops)+1 {
		t.Fatalf("history %s: %v, %d lines, want %d", file, err, lines, len(ops)+1)
	}
}
