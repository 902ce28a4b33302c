package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/narad/narad/adapters/httpclient"
)

// deadLetterFlags are the flags of topic add and edit that set a topic's
// dead-letter policy (docs/api-extensions.md "Dead letters").
type deadLetterFlags struct {
	topic       string
	maxReceives int64
	none        bool // edit only: --no-dead-letter
}

func (d *deadLetterFlags) register(f *pflag.FlagSet, edit bool) {
	f.StringVar(&d.topic, "dead-letter-topic", "", "write a message still unsettled after --max-receive-count deliveries to this existing topic (sets a dead-letter policy)")
	f.Int64Var(&d.maxReceives, "max-receive-count", 0, "deliveries of a message before it goes to --dead-letter-topic, 1 to 1000")
	if edit {
		f.BoolVar(&d.none, "no-dead-letter", false, "remove the topic's dead-letter policy")
	}
}

// policy is the dead-letter policy the flags ask for: nil when neither
// flag is set.
func (d *deadLetterFlags) policy(f *pflag.FlagSet) (*httpclient.DeadLetter, error) {
	topic, count := f.Changed("dead-letter-topic"), f.Changed("max-receive-count")
	switch {
	case d.none && (topic || count):
		return nil, usagef("--no-dead-letter cannot be combined with --dead-letter-topic or --max-receive-count")
	case topic && !count:
		return nil, usagef("--dead-letter-topic needs --max-receive-count")
	case count && !topic:
		return nil, usagef("--max-receive-count needs --dead-letter-topic")
	case !topic:
		return nil, nil
	}
	return &httpclient.DeadLetter{Topic: d.topic, MaxReceiveCount: d.maxReceives}, nil
}

// deadLetterText renders a topic's dead-letter policy for topic info (""
// for none): "orders-dlq after 5 receives".
func deadLetterText(raw json.RawMessage) string {
	var d struct {
		Topic           string `json:"topic"`
		MaxReceiveCount int64  `json:"max_receive_count"`
	}
	if len(raw) == 0 || string(raw) == "null" || json.Unmarshal(raw, &d) != nil {
		return ""
	}
	return fmt.Sprintf("%s after %d receives", d.Topic, d.MaxReceiveCount)
}
