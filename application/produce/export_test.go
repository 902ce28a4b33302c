package produce

import "github.com/narad/narad/domain"

// QueuedBatches is how many batches wait on ref's combiner (tests only).
func (c *Committer) QueuedBatches(ref domain.PartitionRef) int {
	c.comb.mu.Lock()
	defer c.comb.mu.Unlock()
	if q := c.comb.parts[ref]; q != nil {
		return len(q.waiting)
	}
	return 0
}
