package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/narad/narad/adapters/httpclient"
)

// residentMetric is the standard process collector's resident set size.
const residentMetric = "process_resident_memory_bytes"

// idleProgressInterval separates the progress lines of the set-up.
const idleProgressInterval = 2 * time.Second

// idleConfig is one `bench --idle-topics` run: create topics, put one
// message in each, leave them alone and measure what the nodes spend.
type idleConfig struct {
	prefix      string
	topics      int
	partitions  int
	concurrency int
	settle      time.Duration
	window      time.Duration
	asJSON      bool
}

func (c idleConfig) validate() error {
	switch {
	case c.topics < 1 || c.partitions < 1 || c.concurrency < 1:
		return usagef("--idle-topics, --partitions and --producers must be >= 1")
	case c.settle < 0 || c.window <= 0:
		return usagef("--settle must be >= 0 and --window > 0")
	}
	return nil
}

// idleReport is what an idle run prints.
type idleReport struct {
	Topics            int     `json:"topics"`
	Partitions        int     `json:"partitions"` // all topics together
	Created           int     `json:"created"`
	Existing          int     `json:"existing"`
	SetupSeconds      float64 `json:"setup_seconds"`
	WindowSeconds     float64 `json:"window_seconds"`
	CPUSeconds        float64 `json:"cpu_seconds"`
	CorePercent       float64 `json:"core_percent"` // CPU seconds per wall second, in % of one core
	RSSBeforeBytes    float64 `json:"rss_before_bytes"`
	RSSAfterBytes     float64 `json:"rss_after_bytes"`
	BytesPerPartition float64 `json:"bytes_per_partition"` // RSS growth over the set-up per partition
	NodesRead         int     `json:"nodes_read"`
}

// nodeReading is one scrape of every target: CPU seconds and RSS summed.
type nodeReading struct {
	at       time.Time
	cpu, rss float64
	read     int
	errs     []error
}

// readNodes scrapes the two process series from every target, asking the
// node for just those (name[] filter: the exposition of thousands of
// partitions is megabytes).
func readNodes(ctx context.Context, cl *httpclient.Client, targets []metricsTarget) nodeReading {
	ctx, cancel := context.WithTimeout(ctx, scrapeTimeout)
	defer cancel()
	var mu sync.Mutex
	r := nodeReading{}
	var wg sync.WaitGroup
	for _, t := range targets {
		wg.Go(func() {
			body, err := cl.Scrape(ctx, withNames(t.url, cpuMetric, residentMetric))
			var cpu, rss float64
			if err == nil {
				cpu, err = seriesValue(body, cpuMetric)
			}
			if err == nil {
				rss, err = seriesValue(body, residentMetric)
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				r.errs = append(r.errs, fmt.Errorf("%s: %w", t.url, explainScrape(t, err)))
				return
			}
			r.cpu, r.rss, r.read = r.cpu+cpu, r.rss+rss, r.read+1
		})
	}
	wg.Wait()
	r.at = time.Now()
	return r
}

// withNames adds Prometheus name[] filters to a metrics URL.
func withNames(raw string, names ...string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	q := u.Query()
	for _, n := range names {
		q.Add("name[]", n)
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// runIdle sets up cfg.topics topics (reusing those that exist), one
// message each, waits cfg.settle, then measures the nodes over cfg.window.
func runIdle(e *env, cl *httpclient.Client, targets []metricsTarget, cfg idleConfig) (idleReport, error) {
	rep := idleReport{Topics: cfg.topics, Partitions: cfg.topics * cfg.partitions}
	before := readNodes(e.ctx, cl, targets)
	if len(before.errs) > 0 {
		return rep, fmt.Errorf("read the nodes before the set-up: %w", before.errs[0])
	}
	start := time.Now()
	created, existing, err := setUpIdle(e, cl, cfg)
	rep.Created, rep.Existing, rep.SetupSeconds = created, existing, time.Since(start).Seconds()
	if err != nil {
		return rep, err
	}
	fmt.Fprintf(e.stderr, "narad: %d topics ready; settling for %s, then measuring for %s\n", cfg.topics, cfg.settle, cfg.window)
	w, err := measureWindow(e, cl, targets, cfg.settle, cfg.window)
	if err != nil {
		return rep, err
	}
	rep.NodesRead, rep.WindowSeconds, rep.CPUSeconds, rep.CorePercent = w.nodes, w.seconds, w.cpuSeconds, w.corePercent
	rep.RSSBeforeBytes, rep.RSSAfterBytes = before.rss, w.rss
	rep.BytesPerPartition = (w.rss - before.rss) / float64(rep.Partitions)
	return rep, nil
}

// windowReading is what the nodes spent over a measuring window.
type windowReading struct {
	nodes                            int
	seconds, cpuSeconds, corePercent float64
	rss                              float64 // at the window's end
}

// measureWindow waits settle, reads the nodes once to warm what a scrape
// reads (a closed log's statistics are read from disk once, so the window
// does not pay for it), then reads them at the start and the end of window.
func measureWindow(e *env, cl *httpclient.Client, targets []metricsTarget, settle, window time.Duration) (windowReading, error) {
	if err := pause(e.ctx, settle); err != nil {
		return windowReading{}, err
	}
	readNodes(e.ctx, cl, targets)
	from := readNodes(e.ctx, cl, targets)
	if err := pause(e.ctx, window); err != nil {
		return windowReading{}, err
	}
	to := readNodes(e.ctx, cl, targets)
	for _, r := range []nodeReading{from, to} {
		if len(r.errs) > 0 {
			return windowReading{}, fmt.Errorf("read the nodes: %w", r.errs[0])
		}
	}
	w := windowReading{nodes: to.read, seconds: to.at.Sub(from.at).Seconds(), rss: to.rss}
	w.cpuSeconds = math.Round((to.cpu-from.cpu)*1e3) / 1e3
	w.corePercent = 100 * w.cpuSeconds / max(w.seconds, 1e-9)
	return w, nil
}

// setUpIdle creates the topics and produces one message to each, from
// cfg.concurrency workers, printing progress. A topic that exists counts as
// existing and still gets its message.
func setUpIdle(e *env, cl *httpclient.Client, cfg idleConfig) (created, existing int, err error) {
	var made, found, done atomic.Int64
	next := atomic.Int64{}
	var first atomic.Pointer[error]
	stop := everyInterval(idleProgressInterval, func() {
		fmt.Fprintf(e.stderr, "narad: %d/%d topics set up\n", done.Load(), cfg.topics)
	})
	var wg sync.WaitGroup
	for range cfg.concurrency {
		wg.Go(func() {
			for first.Load() == nil && e.ctx.Err() == nil {
				i := int(next.Add(1))
				if i > cfg.topics {
					return
				}
				isNew, err := setUpOne(e.ctx, cl, fmt.Sprintf("%s-%06d", cfg.prefix, i), cfg.partitions)
				if err != nil {
					first.CompareAndSwap(nil, &err)
					return
				}
				if isNew {
					made.Add(1)
				} else {
					found.Add(1)
				}
				done.Add(1)
			}
		})
	}
	wg.Wait()
	stop()
	if p := first.Load(); p != nil {
		return int(made.Load()), int(found.Load()), *p
	}
	return int(made.Load()), int(found.Load()), e.ctx.Err()
}

// setUpOne creates one topic (a 409 means it exists) and produces one
// message to it.
func setUpOne(ctx context.Context, cl *httpclient.Client, name string, partitions int) (bool, error) {
	_, err := cl.CreateTopic(ctx, httpclient.TopicSpec{Name: name, Partitions: partitions})
	isNew := err == nil
	if err != nil && httpclient.StatusOf(err) != 409 {
		return false, fmt.Errorf("create %s: %w", name, err)
	}
	if err := cl.Produce(ctx, name, []byte(`{"idle":true}`), "", nil); err != nil {
		return isNew, fmt.Errorf("produce to %s: %w", name, err)
	}
	return isNew, nil
}

// everyInterval runs fn every d until the returned stop is called.
func everyInterval(d time.Duration, fn func()) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				fn()
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

// printIdle writes the report as a table or as JSON.
func printIdle(e *env, cfg idleConfig, r idleReport) error {
	if cfg.asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "idle topics\t%d × %d partitions (%d partitions), one message each\n", r.Topics, cfg.partitions, r.Partitions)
	fmt.Fprintf(tw, "set up\t%d created, %d existing, in %.1fs\n", r.Created, r.Existing, r.SetupSeconds)
	fmt.Fprintf(tw, "node CPU\t%.3fs over %.1fs on %d node(s): %.2f%% of a core\n", r.CPUSeconds, r.WindowSeconds, r.NodesRead, r.CorePercent)
	fmt.Fprintf(tw, "resident memory\t%.1f MB before the set-up, %.1f MB after: %.2f KB per partition\n",
		r.RSSBeforeBytes/1e6, r.RSSAfterBytes/1e6, r.BytesPerPartition/1e3)
	return tw.Flush()
}
