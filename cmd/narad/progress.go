package main

import (
	"fmt"
	"sync"
	"time"
)

// statusLine prints progress lines on standard error: rewritten in place
// (padded to width) on a terminal, one line each otherwise.
type statusLine struct {
	e     *env
	width int
	wrote bool
}

func (p *statusLine) print(s string) {
	if p.e.stderrTTY {
		fmt.Fprintf(p.e.stderr, "\r%-*s", p.width, s)
	} else {
		fmt.Fprintln(p.e.stderr, s)
	}
	p.wrote = true
}

// end closes a line left open on a terminal.
func (p *statusLine) end() {
	if p.wrote && p.e.stderrTTY {
		fmt.Fprintln(p.e.stderr)
	}
	p.wrote = false
}

// showProgress prints line() about every e.progressEvery until stopped, as
// a statusLine of width.
func showProgress(e *env, width int, line func() string) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(e.progressEvery)
		defer t.Stop()
		p := &statusLine{e: e, width: width}
		for {
			select {
			case <-done:
				p.end()
				return
			case <-t.C:
				p.print(line())
			}
		}
	})
	return func() { close(done); wg.Wait() }
}
