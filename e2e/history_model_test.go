package e2e

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
)

// The delivery contract of internals.md §1 as a model porcupine checks
// recorded histories against (§15.1). The unit is a (message, path) pair —
// a message produced to a parent is a separate obligation on the parent and
// on each child — and within it one stored copy (partition:offset) of the
// message: a retried produce, a re-dispatch after a crash or a re-copy by a
// fan-out cursor stores a second copy that is leased and acked on its own
// (§1.2), so acks and leases are per copy. Each copy walks
//
//	absent → stored (produce 202, or an ambiguous produce that may have
//	landed) → leased (a delivery; a further delivery after a lapse or a
//	nack keeps it leased) → acked (ack 204 on the live lease)
//
// and acked → leased only where a crash explains it: an ack answered at
// most histAckLossWindow before a kill -9 may be forgotten (§1.2 "Broker
// process crash"), and the copy may come back once the node is killed. A
// delivery on a delay child is never earlier than the produce call plus the
// delay (§1.6). A final operation after the drain requires every
// (message, path) that got a 202 to have been delivered at least once.
//
// Outcomes the client cannot interpret are excluded, never guessed: a
// produce or settle without an answer, or with one that leaves its fate open
// (5xx other than an ack's 503, transport errors), may take effect at any
// time after its call, or never.

// histKind names an operation of the history.
type histKind string

const (
	kindProduce histKind = "produce"
	kindDeliver histKind = "deliver"
	kindAck     histKind = "ack"
	kindExtend  histKind = "extend"
	kindNack    histKind = "nack"
	kindFinal   histKind = "final"
)

// histOutcome classifies an answer by what it tells of the operation's
// effect.
type histOutcome string

const (
	outcomeOK        histOutcome = "ok"        // 202, 200 with the message, 204
	outcomeRefused   histOutcome = "refused"   // certainly no effect: produce 4xx, settle 410 or 503
	outcomeAmbiguous histOutcome = "ambiguous" // may or may not have taken effect
)

const (
	// histAckLossWindow is how long before a kill an ack answered 204 may
	// be forgotten: one 100 ms committer tick in the contract (§1.2), with
	// room for a loaded two-core runner.
	histAckLossWindow = 2 * time.Second
	// histDelaySlack absorbs the truncation of commit times to the
	// millisecond (§4.3) in the never-early check of delay children.
	histDelaySlack = 5 * time.Millisecond
)

// histOp is one operation as the client saw it. Times are wall-clock
// nanoseconds since the recorder started (one host, one clock: the nodes
// gate delay children on the same clock). A produce names the parent path;
// checking expands it onto every path of the topology.
type histOp struct {
	Client  int         `json:"client"`
	Kind    histKind    `json:"op"`
	ID      string      `json:"msg"`
	Path    string      `json:"path"`
	Copy    string      `json:"copy,omitempty"`   // partition:offset of the delivered copy
	Handle  string      `json:"handle,omitempty"` // receipt handle of the lease
	Node    int         `json:"node,omitempty"`   // 1-based node the request went to
	Call    int64       `json:"call"`
	Ret     int64       `json:"ret"`
	Status  int         `json:"status"` // HTTP status; 0 for a transport failure
	Outcome histOutcome `json:"outcome"`
	Err     string      `json:"error,omitempty"`
}

// histFault is one injected failure: a node killed (Start before the
// signal, Down once it was gone, End once it was back and ready) or cut off
// the network (Down = Start).
type histFault struct {
	Node  int    `json:"node"`
	Kind  string `json:"kind"` // "kill" or "cut"
	Start int64  `json:"start"`
	Down  int64  `json:"down"`
	End   int64  `json:"end"`
}

// histState is the model's state of one copy of one (message, path) pair.
type histState struct {
	Stored    bool  // a produce that may have stored it took effect
	Accepted  bool  // a produce answered 202 took effect
	StoredAt  int64 // earliest call of such a produce
	Delivered bool
	Lease     string // handle of the live lease, "" when none
	Acked     bool
	AckCall   int64 // the ack that settled it, for the crash explanation
	AckRet    int64
}

// contractModel holds what the model needs beyond the operations: the
// delay of each delay child and the kills that may explain a post-ack
// redelivery.
type contractModel struct {
	delays map[string]time.Duration
	faults []histFault
}

// explained reports whether a kill may have made the owner forget an ack
// taken in [ackCall, ackRet] before a delivery returning at deliverRet.
func (m contractModel) explained(ackCall, ackRet, deliverRet int64) bool {
	for _, f := range m.faults {
		if f.Kind == "kill" && ackCall <= f.Down && ackRet >= f.Start-int64(histAckLossWindow) && deliverRet >= f.Start {
			return true
		}
	}
	return false
}

// step is the nondeterministic transition: every state the copy may be in
// after op answered out, none when the answer is impossible.
func (m contractModel) step(state, input, output any) []any {
	s, op, out := state.(histState), input.(histOp), output.(histOutcome)
	live := s.Lease != "" && s.Lease == op.Handle
	switch op.Kind {
	case kindProduce:
		if out == outcomeRefused {
			return []any{s}
		}
		if !s.Stored || op.Call < s.StoredAt {
			s.StoredAt = op.Call
		}
		s.Stored = true
		s.Accepted = s.Accepted || out == outcomeOK
		return []any{s}
	case kindDeliver:
		if !s.Stored {
			return nil // nothing is delivered that was never produced
		}
		if d := m.delays[op.Path]; d > 0 && op.Ret < s.StoredAt+int64(d-histDelaySlack) {
			return nil // a delay child delivered early
		}
		if s.Acked && !m.explained(s.AckCall, s.AckRet, op.Ret) {
			return nil // redelivered after a confirmed ack, no crash to explain it
		}
		s.Delivered, s.Lease, s.Acked = true, op.Handle, false
		return []any{s}
	case kindAck:
		acked := s
		acked.Acked, acked.Lease, acked.AckCall, acked.AckRet = true, "", op.Call, op.Ret
		return m.settle(s, acked, live, out)
	case kindNack:
		released := s
		released.Lease = ""
		return m.settle(s, released, live, out)
	case kindExtend:
		return m.settle(s, s, live, out)
	case kindFinal:
		if s.Accepted && !s.Delivered {
			return nil // accepted and never delivered: lost
		}
		return []any{s}
	}
	return nil
}

// settle is an ack, extend or nack: 204 needs the live lease; refused
// changes nothing; ambiguous may or may not have applied.
func (contractModel) settle(s, applied histState, live bool, out histOutcome) []any {
	switch {
	case out == outcomeOK && !live:
		return nil
	case out == outcomeOK:
		return []any{applied}
	case out == outcomeAmbiguous && live:
		return []any{s, applied}
	}
	return []any{s}
}

// porcupineModel is the model in porcupine's terms, partitioned per copy.
func (m contractModel) porcupineModel() porcupine.Model {
	nm := porcupine.NondeterministicModel{
		Partition:         partitionHistory,
		Init:              func() []any { return []any{histState{}} },
		Step:              m.step,
		DescribeOperation: describeHistOp,
		DescribeState:     describeHistState,
	}
	return nm.ToModel()
}

func describeHistOp(input, output any) string {
	op := input.(histOp)
	s := fmt.Sprintf("%s %s", op.Kind, op.ID)
	switch op.Kind {
	case kindDeliver:
		s += fmt.Sprintf(" @%s %s", op.Copy, op.Handle)
	case kindAck, kindExtend, kindNack:
		s += " " + op.Handle
	}
	if op.Kind != kindFinal {
		s += fmt.Sprintf(" via n%d → %d", op.Node, op.Status)
	}
	return s + " " + string(output.(histOutcome))
}

func describeHistState(state any) string {
	s := state.(histState)
	var parts []string
	for _, p := range []struct {
		on   bool
		name string
	}{{s.Stored, "stored"}, {s.Accepted, "accepted"}, {s.Delivered, "delivered"}, {s.Lease != "", "leased " + s.Lease}, {s.Acked, "acked"}} {
		if p.on {
			parts = append(parts, p.name)
		}
	}
	if len(parts) == 0 {
		return "absent"
	}
	return strings.Join(parts, ", ")
}

// partitionHistory splits a history into one part per (path, message,
// copy); the produce and final operations of a (path, message) belong to
// each of its copies, and make a part of their own when no copy was ever
// delivered. Parts come in a stable order.
func partitionHistory(ops []porcupine.Operation) [][]porcupine.Operation {
	type pair struct{ path, id string }
	shared := map[pair][]porcupine.Operation{}
	copies := map[pair]map[string][]porcupine.Operation{}
	var pairs []pair
	for _, op := range ops {
		in := op.Input.(histOp)
		k := pair{in.Path, in.ID}
		if _, seen := shared[k]; !seen && copies[k] == nil {
			pairs = append(pairs, k)
		}
		if in.Copy == "" {
			shared[k] = append(shared[k], op)
			continue
		}
		if copies[k] == nil {
			copies[k] = map[string][]porcupine.Operation{}
		}
		copies[k][in.Copy] = append(copies[k][in.Copy], op)
	}
	sort.Slice(pairs, func(i, j int) bool {
		return pairs[i].path < pairs[j].path || pairs[i].path == pairs[j].path && pairs[i].id < pairs[j].id
	})
	var parts [][]porcupine.Operation
	for _, k := range pairs {
		if len(copies[k]) == 0 {
			parts = append(parts, shared[k])
			continue
		}
		names := make([]string, 0, len(copies[k]))
		for c := range copies[k] {
			names = append(names, c)
		}
		sort.Strings(names)
		for _, c := range names {
			parts = append(parts, append(append([]porcupine.Operation(nil), shared[k]...), copies[k][c]...))
		}
	}
	return parts
}

// operations turns recorded operations into porcupine's: a produce is
// expanded onto every path; an ambiguous operation may take effect until
// the end of the history; and one final operation per (path, message)
// comes after everything else.
func histOperations(recorded []histOp, paths []string) []porcupine.Operation {
	var horizon int64
	for _, op := range recorded {
		horizon = max(horizon, op.Call, op.Ret)
	}
	horizon++
	finals := map[[2]string]bool{}
	out := make([]porcupine.Operation, 0, len(recorded)*2)
	add := func(op histOp) {
		ret := op.Ret
		if op.Outcome == outcomeAmbiguous {
			ret = horizon
			op.Ret = horizon
		}
		out = append(out, porcupine.Operation{ClientId: op.Client, Input: op, Call: op.Call, Output: op.Outcome, Return: ret})
	}
	for _, op := range recorded {
		if op.Kind != kindProduce {
			add(op)
			continue
		}
		for _, p := range paths {
			op.Path = p
			add(op)
			finals[[2]string{p, op.ID}] = true
		}
	}
	keys := make([][2]string, 0, len(finals))
	for k := range finals {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return keys[i][0] < keys[j][0] || keys[i][0] == keys[j][0] && keys[i][1] < keys[j][1]
	})
	for _, k := range keys {
		op := histOp{Kind: kindFinal, Path: k[0], ID: k[1], Call: horizon + 1, Ret: horizon + 1, Outcome: outcomeOK}
		out = append(out, porcupine.Operation{Input: op, Call: op.Call, Output: op.Outcome, Return: op.Ret})
	}
	return out
}
