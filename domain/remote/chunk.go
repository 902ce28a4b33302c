package remote

import "strings"

// ByteCap is one lane's request body cap (internals.md §7.2 "Chunks"): it
// starts at ChunkStartBytes, halves down to ChunkMinBytes on a timeout, an
// upload the target cut short or a 413, and doubles back up after
// ChunkGrowAfterAccepted accepted requests in a row. The zero ByteCap is a
// fresh one.
type ByteCap struct {
	bytes    int // the cap; 0 stands for ChunkStartBytes
	accepted int // accepted requests in a row since the last change
}

// Bytes is the current cap.
func (c *ByteCap) Bytes() int {
	if c.bytes == 0 {
		return ChunkStartBytes
	}
	return c.bytes
}

// Shrink halves the cap, not below ChunkMinBytes, and restarts the count of
// accepted requests.
func (c *ByteCap) Shrink() {
	c.accepted = 0
	c.bytes = max(c.Bytes()/2, ChunkMinBytes)
}

// Accepted counts one accepted request; the ChunkGrowAfterAccepted-th in a
// row doubles the cap, not above ChunkStartBytes.
func (c *ByteCap) Accepted() {
	if c.Bytes() >= ChunkStartBytes {
		c.accepted = 0
		return
	}
	c.accepted++
	if c.accepted >= ChunkGrowAfterAccepted {
		c.accepted = 0
		c.bytes = min(c.Bytes()*2, ChunkStartBytes)
	}
}

// NextChunk is how many of the next encoded messages, whose sizes are
// given in order, go in one request: at most maxMessages, with the whole
// body (BatchLen) at most maxBytes. A message too big for the cap goes in a
// request by itself, so a non-empty sizes gives at least 1.
func NextChunk(sizes []int, maxMessages, maxBytes int) int {
	total := batchOverheadBytes
	for n, s := range sizes {
		add := s
		if n > 0 {
			add++ // the comma
		}
		if n > 0 && (n >= maxMessages || total+add > maxBytes) {
			return n
		}
		total += add
	}
	return len(sizes)
}

// WorthCompressing reports whether a chunk of raw bytes that compressed to
// compressed bytes is sent compressed: it saves at least
// CompressMinSavingPercent (internals.md §7.2 "Compression").
func WorthCompressing(raw, compressed int) bool {
	if raw <= 0 || compressed < 0 {
		return false
	}
	return int64(raw-compressed)*100 >= int64(raw)*CompressMinSavingPercent
}

// The errors a target answers the capability probe with (api.md §2.13.1).
const probeLegacyPrefix = "too many messages"

// ProbeCapacity reads the answer to the capability probe (AppendProbe): a
// target capped at 100 messages says "too many messages", a 1,000-capable
// one names the first empty message (internals.md §7.2 "Chunks"). It
// returns the messages per request the target takes; ok is false for any
// other answer, which the caller classifies with Classify.
func ProbeCapacity(a Answer) (maxMessages int, ok bool) {
	if a.Err != TransportNone || a.Status != statusBadRequest {
		return 0, false
	}
	msg, narad := NaradError(a.Body)
	switch {
	case !narad:
		return 0, false
	case strings.HasPrefix(msg, probeLegacyPrefix):
		return ChunkMaxMessagesLegacy, true
	case messageIndex(msg) >= 0:
		return ChunkMaxMessagesCapable, true
	}
	return 0, false
}
