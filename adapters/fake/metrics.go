package fake

import (
	"fmt"
	"sync"
	"time"
)

// Metrics is a ports.Metrics that records every call as a counter keyed by
// "method topic/partition/label", for tests to assert on.
type Metrics struct {
	mu     sync.Mutex
	counts map[string]int
}

func (m *Metrics) add(key string, n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.counts == nil {
		m.counts = map[string]int{}
	}
	m.counts[key] += n
}

// Count returns the recorded total for a key such as "produced orders/0".
func (m *Metrics) Count(key string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.counts[key]
}

func (m *Metrics) MessagesProduced(topic string, p int32, records, _ int) {
	m.add(fmt.Sprintf("produced %s/%d", topic, p), records)
}
func (m *Metrics) ProduceRejected(topic, reason string) {
	m.add(fmt.Sprintf("produce_rejected %s/%s", topic, reason), 1)
}
func (m *Metrics) MessagesConsumed(topic string, p int32, records, _ int) {
	m.add(fmt.Sprintf("consumed %s/%d", topic, p), records)
}
func (m *Metrics) ConsumeWaited(topic, outcome string, _ time.Duration) {
	m.add(fmt.Sprintf("consume_wait %s/%s", topic, outcome), 1)
}
func (m *Metrics) LeaseSettled(topic, op string) { m.add(fmt.Sprintf("%s %s", op, topic), 1) }
func (m *Metrics) MessagesDeadLettered(topic string, n int) {
	m.add(fmt.Sprintf("dead_lettered %s", topic), n)
}
func (m *Metrics) MessagesScheduled(topic string, p int32, records int) {
	m.add(fmt.Sprintf("scheduled %s/%d", topic, p), records)
}
func (m *Metrics) MessagesReleased(topic string, p int32, lagsMs []int64) {
	m.add(fmt.Sprintf("released %s/%d", topic, p), len(lagsMs))
}
func (m *Metrics) DeadLetterFailed(topic string) {
	m.add(fmt.Sprintf("dead_letter_failed %s", topic), 1)
}
func (m *Metrics) RedriveMoved(topic string, n int) {
	m.add(fmt.Sprintf("redriven %s", topic), n)
}
func (m *Metrics) CorruptSkipped(topic string, p int32) {
	m.add(fmt.Sprintf("corrupt_skipped %s/%d", topic, p), 1)
}
func (m *Metrics) Error(component, kind string) {
	m.add(fmt.Sprintf("error %s/%s", component, kind), 1)
}
