package membership

import (
	"fmt"

	"github.com/narad/narad/domain/meta"
)

// placementReader reads every topic's placement from the local replica.
type placementReader interface {
	ListTopics(after string, limit int) ([]meta.Topic, error)
	Assignments(topic string) ([]meta.Assignment, error)
}

// placementCounts is each node's share of the placement: partitions it
// owns, those of them with a move target (outbound), and partitions whose
// move targets it (inbound).
type placementCounts struct {
	owned, outbound, inbound map[string]int
}

// countPlacement counts the live rows of every topic; rows past a topic's
// partition count are orphans the controller prunes and count for nobody.
func countPlacement(r placementReader) (placementCounts, error) {
	topics, err := r.ListTopics("", 0)
	if err != nil {
		return placementCounts{}, fmt.Errorf("placement: topics: %w", err)
	}
	c := placementCounts{owned: map[string]int{}, outbound: map[string]int{}, inbound: map[string]int{}}
	for _, t := range topics {
		rows, err := r.Assignments(t.Name)
		if err != nil {
			return placementCounts{}, fmt.Errorf("placement of %s: %w", t.Name, err)
		}
		for _, a := range rows {
			if a.Partition >= int32(t.Partitions) {
				continue
			}
			c.owned[a.Owner]++
			if a.Target != "" {
				c.outbound[a.Owner]++
				c.inbound[a.Target]++
			}
		}
	}
	return c, nil
}
