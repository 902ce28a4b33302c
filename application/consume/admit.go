package consume

import (
	"fmt"
	"sync"

	"github.com/narad/narad/domain"
)

// admission counts each identity's consume requests in flight on this node
// (api.md §0.8): a batch counts as its max, clamped to the limit, and a long
// poll counts while it waits.
type admission struct {
	mu       sync.Mutex
	limit    int
	inFlight map[string]int
}

// admit takes weight slots for identity, or refuses with the API's 429.
// The returned func gives them back.
func (a *admission) admit(identity string, weight int) (func(), error) {
	weight = max(1, min(weight, a.limit))
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.inFlight[identity]+weight > a.limit {
		return nil, domain.Refuse(domain.ErrTooManyConsumes,
			fmt.Sprintf("too many in-flight consume requests for this identity (limit %d per node)", a.limit))
	}
	a.inFlight[identity] += weight
	return func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		if a.inFlight[identity] -= weight; a.inFlight[identity] <= 0 {
			delete(a.inFlight, identity)
		}
	}, nil
}
