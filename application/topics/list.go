package topics

import (
	"context"
	"github.com/narad/narad/domain/access"

	"github.com/narad/narad/domain/meta"
)

// Page is one keyset page of topics (api.md §2.6). Next is the name of the
// page's last topic when at least one more topic follows it, else "".
type Page struct {
	Topics []meta.Topic
	Next   string
}

// List returns up to limit topics named after pageToken, by name, keeping
// only those caller may read. limit <= 0 means ListLimitDefault; above
// ListLimitMax it is clamped. The page is cut before it is filtered (api.md
// §2.6): Next names the last topic of the unfiltered page, so a page can be
// short or empty while Next is set.
func (s *Service) List(_ context.Context, caller access.Principal, pageToken string, limit int) (Page, error) {
	switch {
	case limit <= 0:
		limit = ListLimitDefault
	case limit > ListLimitMax:
		limit = ListLimitMax
	}
	got, err := s.store.ListTopics(pageToken, limit+1)
	if err != nil {
		return Page{}, readFailure(err)
	}
	page := Page{Topics: got}
	if len(got) > limit {
		page.Topics = got[:limit]
		page.Next = got[limit-1].Name
	}
	page.Topics = readable(caller, page.Topics)
	return page, nil
}

// readable keeps the topics p may read, never nil.
func readable(p access.Principal, ts []meta.Topic) []meta.Topic {
	out := make([]meta.Topic, 0, len(ts))
	for _, t := range ts {
		if access.CanRead(p, accessTopic(t)) {
			out = append(out, t)
		}
	}
	return out
}
