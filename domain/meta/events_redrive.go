package meta

import (
	"github.com/narad/narad/domain/deadletter"
)

// Redrive is a dead-letter topic's redrive job as every replica holds it:
// the last one started, running or ended (docs/api-extensions.md
// "Redrive").
type Redrive = deadletter.Job

// SetTopicRedrive (type 40) starts, advances or ends the redrive job of
// topic incarnation ID (of the topic whatever its incarnation when ID is
// empty). With Job empty it starts Redrive, a running job with nothing
// moved yet, refused while another job of the topic runs; with Job set it
// replaces the running job of that id with Redrive (progress, or its end),
// and is a conflict when the topic's job is another one or has ended. It
// changes nothing else, and does not look the target topic up.
type SetTopicRedrive struct {
	Name    string  `json:"name"`
	ID      string  `json:"id"`
	Job     string  `json:"job,omitempty"`
	Redrive Redrive `json:"redrive"`
}

func (*SetTopicRedrive) Type() EntryType   { return TypeSetTopicRedrive }
func (e *SetTopicRedrive) Subject() string { return "topic " + e.Name }

// Validate checks the name, the id and the job's rules; a start carries a
// running job with nothing counted, an update the id it names.
func (e *SetTopicRedrive) Validate() error {
	if err := validPolicyRef(e.Name, e.ID); err != nil {
		return err
	}
	if err := e.Redrive.Validate(e.Name); err != nil {
		return invalid("%s", deadletter.Rule(err))
	}
	r := e.Redrive
	switch {
	case e.Job == "" && (!r.Running() || r.Moved != 0 || r.Skipped != 0 || r.Runs != 0 || r.Error != ""):
		return invalid("a redrive starts running with nothing moved")
	case e.Job != "" && r.ID != e.Job:
		return invalid("redrive %q cannot replace job %q", r.ID, e.Job)
	}
	return nil
}

func (e *SetTopicRedrive) apply(t *tx, _ Envelope) (Result, error) {
	tp, refusal, ok, err := policyTopic(t, e.Name, e.ID, "redrive")
	if !ok {
		return refusal, err
	}
	cur := tp.Redrive
	switch {
	case e.Job == "" && cur != nil && cur.Running():
		return refuse(CodeRefused, "topic %q already runs redrive %s; cancel it first", e.Name, cur.ID), nil
	case e.Job != "" && (cur == nil || cur.ID != e.Job):
		return refuse(CodeConflict, "topic %q runs no redrive %s", e.Name, e.Job), nil
	case e.Job != "" && !cur.Running():
		return refuse(CodeConflict, "redrive %s of topic %q has already ended (%s)", e.Job, e.Name, cur.State), nil
	}
	r := e.Redrive
	tp.Redrive = &r
	t.putTopic(tp)
	return okResult(), nil
}
