package redrive_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/deadletter"
	"github.com/narad/narad/domain/meta"
)

var epoch = time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)

// ensure that a job moves every letter's key and payload to its origin,
// acks each one, ends done once the topic brings nothing, counts what it
// moved in the job and the metric (issue 19: "Redrive returns every dead
// letter to its origin").
func TestJobMovesEveryLetterToItsOrigin(t *testing.T) {
	t.Parallel()
	var payloads [][]byte
	var wantJobs, wantOther []string
	for i := range 250 {
		origin := "jobs"
		if i%5 == 0 {
			origin = "retry"
			wantOther = append(wantOther, want(i))
		} else {
			wantJobs = append(wantJobs, want(i))
		}
		payloads = append(payloads, letter(origin, i))
	}
	f := newFixture(t, newSource(payloads...), fake.NewClock(epoch))
	f.start(t, meta.Redrive{RatePerSec: 0})
	f.run(t)
	j := f.waitEnded(t)
	if j.State != deadletter.RedriveDone || j.Moved != 250 || j.Skipped != 0 || j.Error != "" {
		t.Fatalf("job %+v", j)
	}
	if got := f.sink.produced("jobs"); !slices.Equal(got, wantJobs) {
		t.Fatalf("jobs got %d letters, want %d", len(got), len(wantJobs))
	}
	if got := f.sink.produced("retry"); !slices.Equal(got, wantOther) {
		t.Fatalf("retry got %v", got)
	}
	if n := len(f.src.ackedOffsets()); n != 250 {
		t.Fatalf("acked %d of 250", n)
	}
	if n := f.metrics.Count("redriven " + dlq); n != 250 {
		t.Fatalf("metric %d", n)
	}
}

// ensure that a job with a target sends every letter there, and that its
// cap stops it after exactly that many, leaving the rest unacked.
func TestJobTargetAndCap(t *testing.T) {
	t.Parallel()
	f := newFixture(t, newSource(letters("jobs", 30)...), fake.NewClock(epoch))
	f.start(t, meta.Redrive{To: "retry", MaxMessages: 12})
	f.run(t)
	j := f.waitEnded(t)
	if j.State != deadletter.RedriveDone || j.Moved != 12 {
		t.Fatalf("job %+v", j)
	}
	if got := f.sink.produced("retry"); len(got) != 12 || got[0] != want(0) || len(f.sink.produced("jobs")) != 0 {
		t.Fatalf("produced %v to retry, %v to jobs", got, f.sink.produced("jobs"))
	}
	if got := f.src.ackedOffsets(); len(got) != 12 {
		t.Fatalf("acked %v", got)
	}
}

// ensure that a message that is not a dead letter is neither produced nor
// acked, is counted once although its lease lapses and it comes back, and
// that the job ends done once only such messages come.
func TestJobSkipsWhatIsNotADeadLetter(t *testing.T) {
	t.Parallel()
	src := newSource([]byte("hello"), letter("jobs", 1), []byte(`{"dead_letter":{"topic":"jobs"}}`))
	src.onLease = src.lapse
	f := newFixture(t, src, fake.NewClock(epoch))
	f.start(t, meta.Redrive{RatePerSec: 0})
	f.run(t)
	j := f.waitEnded(t)
	if j.State != deadletter.RedriveDone || j.Moved != 1 || j.Skipped != 2 || !strings.Contains(j.Error, "not a dead letter") {
		t.Fatalf("job %+v", j)
	}
	if got := src.ackedOffsets(); !slices.Equal(got, []int64{1}) {
		t.Fatalf("acked %v", got)
	}
}

// ensure that an origin that refuses a produce for good keeps its letters
// in the dead-letter topic (skipped, the error kept) while the others move,
// and that a target that refuses for good fails the job with the error.
func TestJobPermanentRefusals(t *testing.T) {
	t.Parallel()
	t.Run("origin", func(t *testing.T) {
		t.Parallel()
		src := newSource(letter("gone", 0), letter("jobs", 1), letter("gone", 2), letter("jobs", 3))
		f := newFixture(t, src, fake.NewClock(epoch))
		f.sink.setFail("gone", domain.ErrTopicNotFound)
		f.start(t, meta.Redrive{RatePerSec: 0})
		f.run(t)
		j := f.waitEnded(t)
		if j.State != deadletter.RedriveDone || j.Moved != 2 || j.Skipped != 2 || !strings.Contains(j.Error, "produce to gone") {
			t.Fatalf("job %+v", j)
		}
		if got := src.ackedOffsets(); !slices.Equal(got, []int64{1, 3}) {
			t.Fatalf("acked %v", got)
		}
	})
	t.Run("target", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newSource(letter("jobs", 0)), fake.NewClock(epoch))
		f.sink.setFail("retry", domain.Refuse(domain.ErrInvalidArgument, "payload does not match the topic's schema"))
		f.start(t, meta.Redrive{To: "retry", RatePerSec: 0})
		f.run(t)
		j := f.waitEnded(t)
		if j.State != deadletter.RedriveFailed || j.Moved != 0 || !strings.Contains(j.Error, "schema") {
			t.Fatalf("job %+v", j)
		}
		if got := f.src.ackedOffsets(); len(got) != 0 {
			t.Fatalf("acked %v after a refused produce", got)
		}
	})
}

// ensure that transient failures of the consume and the produce are tried
// again until they clear, the job keeping the last one as its error, and
// that no letter is acked before its produce succeeded.
func TestJobRetriesTransientFailures(t *testing.T) {
	t.Parallel()
	src := newSource(letter("jobs", 0), letter("jobs", 1))
	f := newFixture(t, src, fake.NewClock(epoch))
	src.failNext = domain.ErrOwnerDown
	f.sink.setFail("jobs", domain.Refuse(domain.ErrUnavailable, "no quorum"))
	leases := 0
	src.onLease = func() {
		leases++
		if leases == 4 {
			f.sink.setFail("jobs", nil)
		}
		src.lapse()
	}
	f.start(t, meta.Redrive{RatePerSec: 0})
	f.run(t)
	j := f.waitEnded(t)
	if j.State != deadletter.RedriveDone || j.Moved != 2 {
		t.Fatalf("job %+v", j)
	}
	if got := f.sink.produced("jobs"); !slices.Equal(got, []string{want(0), want(1)}) {
		t.Fatalf("produced %v", got)
	}
}

// ensure that a letter produced but whose ack was refused (its lease
// lapsed) is acked without a second produce when it comes back.
func TestJobAcksAgainWithoutProducingAgain(t *testing.T) {
	t.Parallel()
	src := newSource(letter("jobs", 0), letter("jobs", 1))
	src.refuse[0] = true
	src.onLease = src.lapse
	f := newFixture(t, src, fake.NewClock(epoch))
	f.start(t, meta.Redrive{RatePerSec: 0})
	f.run(t)
	j := f.waitEnded(t)
	if j.State != deadletter.RedriveDone || j.Moved != 2 {
		t.Fatalf("job %+v", j)
	}
	if got := f.sink.produced("jobs"); !slices.Equal(got, []string{want(0), want(1)}) {
		t.Fatalf("produced %v, want each once", got)
	}
	if got := src.ackedOffsets(); !slices.Equal(got, []int64{0, 1}) {
		t.Fatalf("acked %v", got)
	}
}

// ensure that a job started by a user produces only where that user holds
// produce now: a letter for another origin stays, with the refusal kept.
func TestJobActsWithItsStartersGrants(t *testing.T) {
	t.Parallel()
	f := newFixture(t, newSource(letter("jobs", 0), letter("retry", 1)), fake.NewClock(epoch))
	f.propose(t, &meta.CreateUser{Username: "kim", PasswordHash: []byte("hash"), Grants: []meta.Grant{{Action: "produce", Patterns: []string{"jobs"}}}})
	f.start(t, meta.Redrive{RatePerSec: 0, By: "kim"})
	f.run(t)
	j := f.waitEnded(t)
	if j.Moved != 1 || j.Skipped != 1 || !strings.Contains(j.Error, "produce not allowed on this topic") {
		t.Fatalf("job %+v", j)
	}
	if got := f.sink.produced("retry"); len(got) != 0 {
		t.Fatalf("produced %v to a topic kim may not produce to", got)
	}
}

// ensure that only the metadata leader runs jobs, and that a new leader
// resumes a job from the counts a former leader wrote.
func TestJobRunsOnTheLeaderAndResumes(t *testing.T) {
	t.Parallel()
	src := newSource(letter("jobs", 0), letter("jobs", 1), letter("jobs", 2))
	f := newFixture(t, src, fake.NewClock(epoch))
	f.store.SetLeader(false)
	j := f.start(t, meta.Redrive{RatePerSec: 0})
	progress := j
	progress.Moved = 40 // as a former leader wrote it
	f.propose(t, &meta.SetTopicRedrive{Name: dlq, ID: f.topicID, Job: j.ID, Redrive: progress})
	f.run(t)
	time.Sleep(50 * time.Millisecond) // several scans: a follower starts nothing
	if n := len(f.sink.produced("jobs")); n != 0 {
		t.Fatalf("a follower moved %d letters", n)
	}
	f.store.SetLeader(true)
	ended := f.waitEnded(t)
	if ended.State != deadletter.RedriveDone || ended.Moved != 43 {
		t.Fatalf("resumed job %+v, want done with 43 moved", ended)
	}
}

// ensure that a cancel, or the dead-letter topic's delete, stops a running
// job: it moves nothing more, and its end is never written over the
// cancel.
func TestJobStopsWhenCancelledOrDeleted(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"cancel", "delete"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			src := newSource(letters("jobs", 1000)...)
			f := newFixture(t, src, fake.NewClock(epoch))
			j := f.start(t, meta.Redrive{RatePerSec: 0})
			var ev meta.Event = &meta.DeleteTopicIf{Name: dlq, ID: f.topicID}
			if how == "cancel" {
				c := j
				c.State, c.Moved = deadletter.RedriveCancelled, 100
				ev = &meta.SetTopicRedrive{Name: dlq, ID: f.topicID, Job: j.ID, Redrive: c}
			}
			stopped := make(chan meta.Result, 1)
			src.onLease = func() {
				if len(f.sink.produced("jobs")) >= 100 {
					applied, err := f.store.Propose(context.Background(), meta.Envelope{Actor: "test", AtMs: 1, Event: ev})
					if err != nil {
						applied.Result = meta.Result{Code: meta.CodeRefused, Detail: err.Error()}
					}
					stopped <- applied.Result
					src.onLease = nil
				}
			}
			f.run(t)
			if res := <-stopped; res.Code != meta.CodeOK {
				t.Fatalf("%s: %+v", how, res)
			}
			waitQuiet(t, f.sink)
			if n := len(f.sink.produced("jobs")); n >= 1000 {
				t.Fatalf("moved %d after the %s", n, how)
			}
			if how == "cancel" {
				if got := f.job(t); got.State != deadletter.RedriveCancelled || got.Moved != 100 {
					t.Fatalf("job %+v, want the cancel kept", got)
				}
			}
		})
	}
}

// waitQuiet polls until s has produced nothing new for a while.
func waitQuiet(t *testing.T, s *sink) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for n := len(s.produced("jobs")); ; n = len(s.produced("jobs")) {
		time.Sleep(30 * time.Millisecond)
		if len(s.produced("jobs")) == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the job kept moving")
		}
	}
}

// ensure that a deleted dead-letter topic ends its worker quietly.
func TestJobEndsWithItsTopic(t *testing.T) {
	t.Parallel()
	src := newSource(letter("jobs", 0))
	f := newFixture(t, src, fake.NewClock(epoch))
	f.start(t, meta.Redrive{RatePerSec: 0})
	f.propose(t, &meta.DeleteTopicIf{Name: dlq, ID: f.topicID})
	f.run(t)
	time.Sleep(30 * time.Millisecond)
	if n := len(f.sink.produced("jobs")); n != 0 {
		t.Fatalf("moved %d letters of a deleted topic", n)
	}
}

// ensure that the job keeps to its rate: 30 letters at 50 a second with a
// bucket of 5 take at least 0.5 s.
func TestJobKeepsItsRate(t *testing.T) {
	t.Parallel()
	f := newFixture(t, newSource(letters("jobs", 30)...), systemClock{})
	f.start(t, meta.Redrive{RatePerSec: 50})
	start := time.Now()
	f.run(t)
	j := f.waitEnded(t)
	if elapsed := time.Since(start); j.Moved != 30 || elapsed < 500*time.Millisecond {
		t.Fatalf("moved %d in %v, want 30 in at least 500ms", j.Moved, elapsed)
	}
}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

// ensure that a job a former leader ran does not end on an empty consume
// before the dead-letter topic's leases of that leader can have lapsed:
// the letter it held comes back and is moved too.
func TestResumedJobWaitsForTheFormerLeadersLeases(t *testing.T) {
	t.Parallel()
	src := newSource(letter("jobs", 0), letter("jobs", 1), letter("jobs", 2))
	src.leased[0] = 999 // leased by the former leader's worker
	began := time.Now()
	src.onLease = func() {
		if time.Since(began) > visibilityMs*time.Millisecond {
			src.mu.Lock()
			if src.leased[0] == 999 {
				delete(src.leased, 0)
			}
			src.mu.Unlock()
		}
	}
	f := newFixture(t, src, systemClock{})
	j := f.start(t, meta.Redrive{RatePerSec: 0})
	former := j
	former.Runs = 1
	f.propose(t, &meta.SetTopicRedrive{Name: dlq, ID: f.topicID, Job: j.ID, Redrive: former})
	f.run(t)
	ended := f.waitEnded(t)
	if ended.State != deadletter.RedriveDone || ended.Moved != 3 || ended.Runs != 2 {
		t.Fatalf("job %+v, want done with 3 moved in its second run", ended)
	}
	if got := src.ackedOffsets(); !slices.Equal(got, []int64{0, 1, 2}) {
		t.Fatalf("acked %v", got)
	}
}

// ensure that a running job writes its counts as it goes, not only at its
// end, so that a reader (and a new leader) sees its progress.
func TestJobWritesItsProgressWhileRunning(t *testing.T) {
	t.Parallel()
	src := newSource(letters("jobs", 3000)...)
	src.onLease = func() { time.Sleep(5 * time.Millisecond) } // a round takes a while: 30 rounds, saves every 20 ms
	f := newFixture(t, src, systemClock{})
	f.start(t, meta.Redrive{RatePerSec: 0})
	f.run(t)
	deadline := time.Now().Add(10 * time.Second)
	for {
		j := f.job(t)
		if j.Running() && j.Moved > 0 {
			break // progress written before the end
		}
		if !j.Running() || time.Now().After(deadline) {
			t.Fatalf("no progress written while running: %+v", j)
		}
		time.Sleep(time.Millisecond) // polling the fake store, bounded by the deadline
	}
	if j := f.waitEnded(t); j.Moved != 3000 {
		t.Fatalf("job %+v", j)
	}
}
