package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/narad/narad/adapters/httpclient"
)

// redeliveryFlags are the --redelivery-* flags of topic add and edit: a
// topic's redelivery backoff (docs/api-extensions.md "Redelivery backoff").
type redeliveryFlags struct {
	initial, max       durationMs
	multiplier, jitter float64
	none               bool // edit only: --no-redelivery
}

func (r *redeliveryFlags) register(f *pflag.FlagSet, edit bool) {
	f.Var(&r.initial, "redelivery-initial", "wait before redelivering a nacked or lapsed message the first time, e.g. 1s (sets a redelivery backoff)")
	f.Float64Var(&r.multiplier, "redelivery-multiplier", 0, "each further wait is the last one times this, 1 to 10 (0 = server default, 2)")
	f.Var(&r.max, "redelivery-max", "longest wait (0 = server default: 10m, or the initial wait when longer)")
	f.Float64Var(&r.jitter, "redelivery-jitter", 0, "shorten each wait by up to this fraction of it, at random, 0 to 1")
	if edit {
		f.BoolVar(&r.none, "no-redelivery", false, "remove the topic's redelivery backoff")
	}
}

// policy is the backoff the flags ask for: nil when none of them is set.
func (r *redeliveryFlags) policy(f *pflag.FlagSet) (*httpclient.Redelivery, error) {
	others := f.Changed("redelivery-multiplier") || f.Changed("redelivery-max") || f.Changed("redelivery-jitter")
	switch {
	case r.none && (others || f.Changed("redelivery-initial")):
		return nil, usagef("--no-redelivery cannot be combined with the --redelivery-* flags")
	case others && !f.Changed("redelivery-initial"):
		return nil, usagef("--redelivery-multiplier, --redelivery-max and --redelivery-jitter need --redelivery-initial")
	case !f.Changed("redelivery-initial"):
		return nil, nil
	case r.initial.forever || r.max.forever:
		return nil, usagef("--redelivery-initial and --redelivery-max take a duration, not forever")
	case r.initial.ms <= 0:
		return nil, usagef("--redelivery-initial must be at least 1ms")
	}
	return &httpclient.Redelivery{InitialMs: r.initial.ms, Multiplier: r.multiplier, MaxMs: r.max.ms, Jitter: r.jitter}, nil
}

// redeliveryText renders a topic's backoff for topic info ("" for none):
// "1s, then x2 up to 10m, jitter 0.2".
func redeliveryText(raw json.RawMessage) string {
	var r struct {
		InitialMs  int64   `json:"initial_ms"`
		Multiplier float64 `json:"multiplier"`
		MaxMs      int64   `json:"max_ms"`
		Jitter     float64 `json:"jitter"`
	}
	if len(raw) == 0 || string(raw) == "null" || json.Unmarshal(raw, &r) != nil {
		return ""
	}
	s := fmt.Sprintf("%s, then x%g up to %s", formatMs(r.InitialMs), r.Multiplier, formatMs(r.MaxMs))
	if r.Jitter > 0 {
		s += fmt.Sprintf(", jitter %g", r.Jitter)
	}
	return s
}
