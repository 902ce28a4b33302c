package metatest

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/narad/narad/domain/meta"
)

var update = flag.Bool("update", false, "rewrite the expected output of the metadata golden scripts")

// Target is a state machine under test.
type Target interface {
	// ApplyBatch applies envs as Raft entries first, first+1, ... in one
	// batch and returns one result per entry.
	ApplyBatch(first uint64, envs []meta.Envelope) ([]meta.Result, error)
	// Reader exposes the views for describe and history.
	Reader() meta.KVReader
}

// Script format, one command per block, blocks separated by blank lines:
//
//	# comment
//	apply [at=<unix ms>] [actor=<name>]
//	<EntryTypeName> <JSON payload>
//	...
//	----
//	<expected output, no blank lines>
//
// Commands: apply (one batch), describe (every view), history [limit=N].
type block struct {
	cmd    string
	args   map[string]string
	input  []string
	output []string
}

// Run runs every script in dir against a fresh target per script. With
// -update it rewrites the expected outputs instead of comparing.
func Run(t *testing.T, dir string, newTarget func(t *testing.T) Target) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden scripts in %s (err %v)", dir, err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			runFile(t, file, newTarget(t))
		})
	}
}

func runFile(t *testing.T, file string, target Target) {
	blocks, err := parse(file)
	if err != nil {
		t.Fatal(err)
	}
	s := &session{target: target, index: 1, atMs: 1_700_000_000_000}
	for i := range blocks {
		got, err := s.run(&blocks[i])
		if err != nil {
			t.Fatalf("%s: block %d (%s): %v", file, i+1, blocks[i].cmd, err)
		}
		if *update {
			blocks[i].output = got
			continue
		}
		if want := strings.Join(blocks[i].output, "\n"); strings.Join(got, "\n") != want {
			t.Errorf("%s: block %d (%s %v):\n--- got\n%s\n--- want\n%s", file, i+1, blocks[i].cmd, blocks[i].input,
				strings.Join(got, "\n"), want)
		}
	}
	if *update {
		if err := write(file, blocks); err != nil {
			t.Fatal(err)
		}
	}
}

type session struct {
	target Target
	index  uint64
	atMs   int64
	actor  string
}

func (s *session) run(b *block) ([]string, error) {
	switch b.cmd {
	case "apply":
		return s.apply(b)
	case "describe":
		text, err := meta.Describe(s.target.Reader())
		return lines(text), err
	case "history":
		limit, _ := strconv.Atoi(b.args["limit"])
		return s.history(limit)
	}
	return nil, fmt.Errorf("unknown command %q", b.cmd)
}

func (s *session) apply(b *block) ([]string, error) {
	if at, ok := b.args["at"]; ok {
		v, err := strconv.ParseInt(at, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("at=%q: %w", at, err)
		}
		s.atMs = v
	}
	if actor, ok := b.args["actor"]; ok {
		s.actor = actor
	}
	envs := make([]meta.Envelope, 0, len(b.input))
	for _, line := range b.input {
		name, payload, _ := strings.Cut(line, " ")
		typ, ok := meta.TypeByName(name)
		if !ok {
			return nil, fmt.Errorf("unknown entry type %q", name)
		}
		ev, err := meta.DecodePayload(typ, []byte(payload))
		if err != nil {
			return nil, err
		}
		envs = append(envs, meta.Envelope{Actor: s.actor, AtMs: s.atMs, Event: ev})
	}
	results, err := s.target.ApplyBatch(s.index, envs)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(results))
	for i, r := range results {
		out = append(out, fmt.Sprintf("%d %s %s: %s", s.index+uint64(i), envs[i].Event.Type(), envs[i].Event.Subject(), r))
	}
	s.index += uint64(len(envs))
	return out, nil
}

func (s *session) history(limit int) ([]string, error) {
	if limit <= 0 {
		limit = meta.JournalKeep
	}
	entries, err := meta.Journal(s.target.Reader(), 0, limit)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		res := meta.Result{Code: e.Code, Detail: e.Detail}
		out = append(out, fmt.Sprintf("#%d index=%d at_ms=%d actor=%q %s %s: %s", e.Seq, e.Index, e.AtMs, e.Actor, e.Type, e.Subject, res))
	}
	return out, nil
}

func lines(text string) []string {
	text = strings.TrimRight(text, "\n")
	if text == "" {
		return nil
	}
	return strings.Split(text, "\n")
}

func parse(file string) ([]block, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var blocks []block
	var cur *block
	inOutput := false
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case cur == nil && (line == "" || strings.HasPrefix(line, "#")):
		case cur == nil:
			fields := strings.Fields(line)
			blocks = append(blocks, block{cmd: fields[0], args: parseArgs(fields[1:])})
			cur, inOutput = &blocks[len(blocks)-1], false
		case line == "":
			cur = nil
		case line == "----" && !inOutput:
			inOutput = true
		case inOutput:
			cur.output = append(cur.output, line)
		default:
			cur.input = append(cur.input, line)
		}
	}
	return blocks, sc.Err()
}

func parseArgs(fields []string) map[string]string {
	args := make(map[string]string, len(fields))
	for _, f := range fields {
		k, v, _ := strings.Cut(f, "=")
		args[k] = v
	}
	return args
}

// write rewrites file with each block's output, dropping comments between
// blocks except the ones that precede a block (kept with it).
func write(file string, blocks []block) error {
	src, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	comments := leadingComments(string(src))
	var b strings.Builder
	for i, blk := range blocks {
		if i > 0 {
			b.WriteByte('\n')
		}
		for _, c := range comments[i] {
			b.WriteString(c + "\n")
		}
		b.WriteString(blk.cmd)
		for _, k := range sortedKeys(blk.args) {
			fmt.Fprintf(&b, " %s=%s", k, blk.args[k])
		}
		b.WriteByte('\n')
		for _, l := range blk.input {
			b.WriteString(l + "\n")
		}
		b.WriteString("----\n")
		for _, l := range blk.output {
			b.WriteString(l + "\n")
		}
	}
	return os.WriteFile(file, []byte(b.String()), 0o644)
}
