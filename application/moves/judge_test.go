package moves

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/narad/narad/ports"
)

var update = flag.Bool("update", false, "rewrite the expected verdicts in testdata/ with the current output")

// Ensure that every case in testdata/stale.txt still gets the verdict
// recorded under it (internals.md §11.6, the stale-copy sweep); run with
// -update after a deliberate change, and read the diff.
//
// A case is a block of lines ('#' starts a comment):
//
//	local hwm=30 seg=0:500 seg=30:120        this node's copy
//	owner hwm=45 marker=30 seg=0:500 ...     the owner's listing
//	=> reclaim guard=30 (reason)             the verdict, rewritten by -update
func TestJudgeStaleGolden(t *testing.T) {
	const file = "testdata/stale.txt"
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	var local, owner ports.TransferListing
	for n, line := range strings.Split(strings.TrimRight(string(raw), "\n"), "\n") {
		verb, rest, _ := strings.Cut(line, " ")
		switch verb {
		case "local", "owner":
			l, err := parseListing(rest)
			if err != nil {
				t.Fatalf("%s:%d: %v", file, n+1, err)
			}
			if verb == "local" {
				local = l
			} else {
				owner = l
			}
		case "=>":
			got := renderVerdict(judgeStale(local, owner))
			if !*update && line != got {
				t.Errorf("%s:%d: got %q, want %q (run with -update after checking)", file, n+1, got, line)
			}
			line = got
		}
		out.WriteString(line + "\n")
	}
	if *update {
		if err := os.WriteFile(file, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func renderVerdict(v staleVerdict) string {
	return fmt.Sprintf("=> %s guard=%d (%s)", v.Action, v.Guard, v.Reason)
}

// parseListing reads "hwm=N [marker=N] seg=BASE:SIZE ...".
func parseListing(s string) (ports.TransferListing, error) {
	var l ports.TransferListing
	for _, f := range strings.Fields(s) {
		k, v, _ := strings.Cut(f, "=")
		switch k {
		case "hwm", "marker":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return l, err
			}
			if k == "hwm" {
				l.HighWatermark = n
			} else {
				l.Marker = &ports.MoveMarker{PromotedHighWatermark: n}
			}
		case "seg":
			base, size, _ := strings.Cut(v, ":")
			b, err1 := strconv.ParseInt(base, 10, 64)
			n, err2 := strconv.ParseInt(size, 10, 64)
			if err1 != nil || err2 != nil {
				return l, fmt.Errorf("segment %q", v)
			}
			l.Segments = append(l.Segments, ports.TransferFile{Name: fmt.Sprintf("%020d.log", b), Size: n})
		default:
			return l, fmt.Errorf("unknown field %q", f)
		}
	}
	return l, nil
}

// Ensure that every case in testdata/flip.txt still resolves a flip as
// recorded (internals.md §11.5); run with -update after a deliberate
// change. This node is n2, the source n1. A case is one line:
//
//	read=failed|OWNER/TARGET propose=yes|no since=DURATION => action
func TestResolveFlipGolden(t *testing.T) {
	const file = "testdata/flip.txt"
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for n, line := range strings.Split(strings.TrimRight(string(raw), "\n"), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			out.WriteString(line + "\n")
			continue
		}
		input, want, _ := strings.Cut(line, " => ")
		var read flipRead
		var canPropose bool
		var since time.Duration
		for _, f := range strings.Fields(input) {
			k, v, _ := strings.Cut(f, "=")
			switch k {
			case "read":
				if v == "failed" {
					read.Failed = true
				} else {
					read.Owner, read.Target, _ = strings.Cut(v, "/")
				}
			case "propose":
				canPropose = v == "yes"
			case "since":
				if since, err = time.ParseDuration(v); err != nil {
					t.Fatalf("%s:%d: %v", file, n+1, err)
				}
			default:
				t.Fatalf("%s:%d: unknown field %q", file, n+1, f)
			}
		}
		got := string(resolveFlip("n2", "n1", read, canPropose, since))
		if !*update && got != want {
			t.Errorf("%s:%d: %s: got %s, want %s (run with -update after checking)", file, n+1, input, got, want)
		}
		out.WriteString(input + " => " + got + "\n")
	}
	if *update {
		if err := os.WriteFile(file, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
