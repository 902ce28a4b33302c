package remotes

import (
	"context"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/access"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// TestRequest is POST /v1/remotes/{name}/test: the target topic and,
// optionally, the local parent to compare it with.
type TestRequest struct {
	Topic  string
	Source string
}

// TestResult is the verdict of a test: pass only when every member passed.
type TestResult struct {
	Remote string
	Result string
	Class  string
	Checks []Report
}

// Test runs the attach checks against a remote topic and writes nothing.
// A failing check is a verdict, not an error.
func (s *Service) Test(ctx context.Context, p access.Principal, name string, req TestRequest) (TestResult, error) {
	ctx = s.begin(ctx, ports.AuditRemoteTest)
	out, err := s.test(ctx, p, name, req)
	s.record(ctx, p, name, err)
	return out, err
}

func (s *Service) test(ctx context.Context, p access.Principal, name string, req TestRequest) (TestResult, error) {
	if err := authorize(p); err != nil {
		return TestResult{}, err
	}
	if err := domain.ValidateTopicName(req.Topic); err != nil {
		return TestResult{}, invalidField("topic must be a topic name")
	}
	var source *meta.Topic
	if req.Source != "" {
		if err := domain.ValidateTopicName(req.Source); err != nil {
			return TestResult{}, invalidField("source must be a topic name")
		}
		t, found, err := s.d.Store.Topic(req.Source)
		switch {
		case err != nil:
			return TestResult{}, readFailure(err)
		case !found:
			return TestResult{}, domain.Refuse(domain.ErrTopicNotFound, "source topic not found")
		}
		source = &t
	}
	r, err := s.readRemote(name)
	if err != nil {
		return TestResult{}, err
	}
	if ok, after := s.checks.admit(r.Name, s.d.Clock.Now()); !ok {
		return TestResult{}, domain.RefuseLater(domain.ErrRateLimited, msgCheckBusy, after)
	}
	reports := s.checkMembers(ctx, r, req.Topic, source)
	out := TestResult{Remote: r.Name, Result: ResultPass, Checks: reports}
	if class := foldReports(r, reports); class != "" {
		out.Result, out.Class = ResultFail, class
	}
	return out, nil
}
