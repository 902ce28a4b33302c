package schedule

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/narad/narad/domain/goldentest"
)

// Ensure that every script in testdata/ still produces its recorded output
// (issue 19: golden tests of the scheduling state machine). Each command line
// is followed by its output lines ("> ..."); run with -update to rewrite
// them after a deliberate change.
func TestScheduleScripts(t *testing.T) {
	goldentest.Run(t, "testdata/*.txt", runScript)
}

// runScript plays a script against one Partition as an owner would drive
// it: "schedule <deliver-at>..." appends records to their buckets (the
// loaded one takes its own at once), "release <now> <max>" loads the
// earliest bucket once it starts, hands out what is due and deletes a
// finished bucket, "next" prints the partition's next wake-up.
func runScript(t *testing.T, script string) string {
	var out strings.Builder
	p := &Partition{}
	ordinals := map[int64]uint32{}
	disk := map[int64][]Entry{} // bucket start -> unreleased entries, as the files hold them
	for _, line := range strings.Split(script, "\n") {
		if line == "" || strings.HasPrefix(line, ">") {
			continue
		}
		out.WriteString(line + "\n")
		if strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		switch f[0] {
		case "schedule":
			for _, a := range f[1:] {
				at := num(t, a)
				start := BucketStart(at)
				e := Entry{Ordinal: ordinals[start], DeliverAtMs: at}
				ordinals[start]++
				disk[start] = append(disk[start], e)
				p.Note(start, 1)
				if l := p.Loaded(); l != nil && l.StartMs == start {
					l.Add(e)
				}
			}
		case "release":
			now, maxCount := num(t, f[1]), int(num(t, f[2]))
			released := release(p, disk, now, maxCount)
			fmt.Fprintf(&out, "> released %v\n", released)
		case "next":
		default:
			t.Fatalf("unknown command %q", line)
		}
		next, ok := p.Next()
		loaded := "none"
		if l := p.Loaded(); l != nil {
			loaded = fmt.Sprintf("%d (pending %d)", l.StartMs, l.Len())
		}
		fmt.Fprintf(&out, "> count=%d buckets=%d loaded=%s next=%s\n", p.Count(), p.Buckets(), loaded, when(next, ok))
	}
	return out.String()
}

// release is one release pass of the owner: the script's model of the
// adapter's Release.
func release(p *Partition, disk map[int64][]Entry, now int64, maxCount int) []int64 {
	var out []int64
	for len(out) < maxCount {
		l := p.Loaded()
		if l == nil {
			start, ok := p.Earliest()
			if !ok || start > now {
				return out
			}
			l = NewBucket(start, disk[start])
			p.Load(l)
		}
		for _, e := range l.Due(now, maxCount-len(out)) {
			out = append(out, e.DeliverAtMs)
			disk[l.StartMs] = remove(disk[l.StartMs], e.Ordinal)
			p.Released(1)
		}
		if !l.Finished(now) {
			return out
		}
		delete(disk, l.StartMs)
		p.Forget(l.StartMs)
	}
	return out
}

func remove(es []Entry, ordinal uint32) []Entry {
	for i, e := range es {
		if e.Ordinal == ordinal {
			return append(es[:i], es[i+1:]...)
		}
	}
	return es
}

func when(at int64, ok bool) string {
	if !ok {
		return "none"
	}
	return strconv.FormatInt(at, 10)
}

func num(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("bad number %q", s)
	}
	return n
}
