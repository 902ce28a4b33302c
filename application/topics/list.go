package topics

import (
	"context"

	"github.com/narad/narad/domain/meta"
)

// Page is one keyset page of topics (api.md §2.6). Next is the name of the
// page's last topic when at least one more topic follows it, else "".
type Page struct {
	Topics []meta.Topic
	Next   string
}

// List returns up to limit topics named after pageToken, by name. limit <= 0
// means ListLimitDefault; above ListLimitMax it is clamped.
func (s *Service) List(_ context.Context, pageToken string, limit int) (Page, error) {
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
	if page.Topics == nil {
		page.Topics = []meta.Topic{}
	}
	return page, nil
}
