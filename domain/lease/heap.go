package lease

// expiry is one heap entry; an entry whose nonce or expiry no longer matches
// the live lease is superseded and skipped when popped.
type expiry struct {
	offset   int64
	nonce    uint64
	expiryMs int64
}

type expiryHeap []expiry

func (h expiryHeap) Len() int           { return len(h) }
func (h expiryHeap) Less(i, j int) bool { return h[i].expiryMs < h[j].expiryMs }
func (h expiryHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *expiryHeap) Push(x any)        { *h = append(*h, x.(expiry)) }
func (h *expiryHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}
