package main

import (
	"cmp"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/narad/narad/adapters/httpclient"
)

// redriveJobFlags are the flags of narad redrive that reach the server-side
// redrive job (docs/api-extensions.md "Redrive") in place of the
// client-side run.
type redriveJobFlags struct {
	job, detach, status, cancel, asJSON bool
}

func (jf *redriveJobFlags) register(f *pflag.FlagSet) {
	f.BoolVar(&jf.job, "job", false, "start a redrive job on the server and follow it until it ends (Ctrl-C leaves it running)")
	f.BoolVar(&jf.detach, "detach", false, "with --job, print the job's id and return at once")
	f.BoolVar(&jf.status, "status", false, "print the last redrive job of the topic")
	f.BoolVar(&jf.cancel, "cancel", false, "cancel the running redrive job of the topic")
	f.BoolVar(&jf.asJSON, "json", false, "with --status, --cancel or --job --detach, print the job object as JSON")
}

// any reports whether a flag picks the server-side job.
func (jf *redriveJobFlags) any() bool { return jf.job || jf.status || jf.cancel }

// check refuses the flags that do not go together; f holds them all.
func (jf *redriveJobFlags) check(f *pflag.FlagSet) error {
	var modes []string
	for _, m := range []struct {
		name string
		on   bool
	}{{"--job", jf.job}, {"--status", jf.status}, {"--cancel", jf.cancel}} {
		if m.on {
			modes = append(modes, m.name)
		}
	}
	switch {
	case len(modes) > 1:
		return usagef("--job, --status and --cancel are mutually exclusive")
	case jf.detach && !jf.job:
		return usagef("--detach needs --job")
	case len(modes) == 1 && f.Changed("wait"):
		return usagef("--wait is for the client-side run only, not with %s", modes[0])
	case jf.asJSON && !jf.status && !jf.cancel && !jf.detach:
		return usagef("--json needs --status, --cancel or --job --detach")
	}
	if jf.status || jf.cancel {
		for _, n := range []string{"to", "rate", "max"} {
			if f.Changed(n) {
				return usagef("--%s is refused with %s: it only goes with a start (--job)", n, modes[0])
			}
		}
	}
	return nil
}

// jobRun is one narad redrive --job, --status or --cancel.
type jobRun struct {
	e   *env
	cl  *httpclient.Client
	dlt string
	jf  redriveJobFlags
}

// runRedriveJob starts, follows, shows or cancels the server-side job of
// o.dlt; rateSet says whether --rate was given (else the server's default).
func runRedriveJob(e *env, cl *httpclient.Client, o redriveOpts, jf redriveJobFlags, rateSet bool) error {
	r := &jobRun{e: e, cl: cl, dlt: o.dlt, jf: jf}
	switch {
	case jf.status:
		return r.status()
	case jf.cancel:
		return r.cancelJob()
	}
	opts := httpclient.RedriveOptions{To: o.to, Max: o.max}
	if rateSet {
		opts.Rate = &o.rate
	}
	return r.start(opts)
}

func (r *jobRun) start(opts httpclient.RedriveOptions) error {
	j, err := r.cl.StartRedrive(r.e.ctx, r.dlt, opts)
	if err != nil {
		if httpclient.StatusOf(err) == 409 {
			return fmt.Errorf("start redrive on %s: %w (narad redrive %s --status shows it, --cancel stops it)", r.dlt, err, r.dlt)
		}
		return fmt.Errorf("start redrive on %s: %w", r.dlt, err)
	}
	if r.jf.detach {
		if r.jf.asJSON {
			return printJSON(r.e.stdout, j)
		}
		fmt.Fprintf(r.e.stdout, "started redrive %s on %s\n", j.ID, r.dlt)
		return nil
	}
	rate := "unlimited rate"
	if j.RatePerSec > 0 {
		rate = fmt.Sprintf("%d/s", j.RatePerSec)
	}
	fmt.Fprintf(r.e.stderr, "started redrive %s on %s (%s), %s\n", j.ID, r.dlt, redriveDest(j.To), rate)
	return r.follow(j)
}

// redriveDest is where a job sends the letters, for the started line.
func redriveDest(to string) string {
	if to == "" {
		return "to their origins"
	}
	return "to " + to
}

// follow reads the job every e.progressEvery and prints its progress on
// standard error until it ends, then its outcome on standard output. An
// interrupt stops following, not the job.
func (r *jobRun) follow(j httpclient.Redrive) error {
	line := &statusLine{e: r.e, width: 60}
	for j.Running() {
		if pause(r.e.ctx, r.e.progressEvery) != nil {
			break
		}
		next, err := r.get()
		if err != nil {
			if r.e.ctx.Err() != nil {
				break
			}
			line.end()
			return fmt.Errorf("follow redrive %s of %s: %w; the job goes on on the server: narad redrive %s --status shows it", j.ID, r.dlt, err, r.dlt)
		}
		if j = next; j.Running() {
			line.print(fmt.Sprintf("redrive %s: moved %d, skipped %d", j.ID, j.Moved, j.Skipped))
		}
	}
	line.end()
	if j.Running() {
		fmt.Fprintf(r.e.stderr, "narad: the job goes on on the server; narad redrive %s --status shows it, --cancel stops it\n", r.dlt)
		return nil
	}
	fmt.Fprintf(r.e.stdout, "redrive %s of %s %s: moved %d, skipped %d\n", j.ID, r.dlt, j.State, j.Moved, j.Skipped)
	if j.Error != "" {
		fmt.Fprintf(r.e.stdout, "last error: %s\n", j.Error)
	}
	if j.State == httpclient.RedriveFailed {
		return fmt.Errorf("redrive %s of %s failed: %s", j.ID, r.dlt, cmp.Or(j.Error, "the server gave no reason"))
	}
	return nil
}

// get reads the job, trying a transient failure again.
func (r *jobRun) get() (j httpclient.Redrive, err error) {
	err = withRetries(r.e, func() (err error) {
		j, err = r.cl.Redrive(r.e.ctx, r.dlt)
		return err
	})
	return j, err
}

func (r *jobRun) status() error {
	j, err := r.get()
	if err != nil {
		return fmt.Errorf("redrive status of %s: %w", r.dlt, err)
	}
	if r.jf.asJSON {
		return printJSON(r.e.stdout, j)
	}
	return printRedriveJob(r.e.stdout, j)
}

// cancelJob is not retried: a cancel whose answer was lost would answer
// 409 the second time.
func (r *jobRun) cancelJob() error {
	j, err := r.cl.CancelRedrive(r.e.ctx, r.dlt)
	if err != nil {
		return fmt.Errorf("cancel redrive of %s: %w", r.dlt, err)
	}
	if r.jf.asJSON {
		return printJSON(r.e.stdout, j)
	}
	fmt.Fprintf(r.e.stdout, "cancelled redrive %s of %s: moved %d, skipped %d\n", j.ID, r.dlt, j.Moved, j.Skipped)
	return nil
}

// redriveText is topic info's line for the topic's last redrive job, "" when
// none was started.
func redriveText(j *httpclient.Redrive) string {
	if j == nil {
		return ""
	}
	return fmt.Sprintf("%s %s, moved %d, skipped %d", j.ID, j.State, j.Moved, j.Skipped)
}

// printRedriveJob prints the job as `key:  value` lines, leaving out the
// empty ones, as narad topic info does.
func printRedriveJob(w io.Writer, j httpclient.Redrive) error {
	fields := newFieldTable(w)
	row := fields.row
	row("id", j.ID)
	row("state", j.State)
	row("to", cmp.Or(j.To, "their origins"))
	row("rate_per_sec", countOr(int64(j.RatePerSec), "unlimited"))
	row("max_messages", countOr(j.MaxMessages, "all"))
	row("moved", strconv.FormatInt(j.Moved, 10))
	row("skipped", strconv.FormatInt(j.Skipped, 10))
	row("runs", strconv.Itoa(j.Runs))
	row("error", j.Error)
	row("started_by", j.StartedBy)
	row("started_at", rfc3339Ms(j.StartedAtMs))
	row("updated_at", rfc3339Ms(j.UpdatedAtMs))
	return fields.flush()
}

// countOr is n in decimal, or zero when n is 0.
func countOr(n int64, zero string) string {
	if n == 0 {
		return zero
	}
	return strconv.FormatInt(n, 10)
}

// rfc3339Ms renders Unix milliseconds as UTC RFC 3339, "" for 0.
func rfc3339Ms(ms int64) string {
	if ms == 0 {
		return ""
	}
	return time.UnixMilli(ms).UTC().Format(time.RFC3339)
}
