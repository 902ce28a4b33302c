package deadletter

// Kind says what a Record states about one offset of a partition.
type Kind uint8

// The kinds of Record. Numbers are stored on disk: never renumber.
const (
	// KindCount: the offset has been received Count times.
	KindCount Kind = 1
	// KindReason: the last nack of the offset gave Reason.
	KindReason Kind = 2
	// KindIntent: the offset is being moved to the dead-letter topic after
	// Count receives; it is never delivered from its origin again.
	KindIntent Kind = 3
)

// ReasonBytesMax is the longest nack reason kept, in bytes; a longer one is
// refused where it is parsed.
const ReasonBytesMax = 1024

// Record is one durable statement of a partition's receive-count table.
// Replaying a partition's records in order with Table.Apply rebuilds its
// table; a later record of an offset supersedes an earlier one of the same
// kind.
type Record struct {
	Kind   Kind
	Offset int64
	Count  uint32 // KindCount, KindIntent
	Reason string // KindReason
}

// Valid reports whether r could have been made by a Table: a known kind, an
// offset >= 0, a count >= 1 where it carries one, a reason within
// ReasonBytesMax.
func (r Record) Valid() bool {
	if r.Offset < 0 {
		return false
	}
	switch r.Kind {
	case KindCount, KindIntent:
		return r.Count >= 1 && r.Reason == ""
	case KindReason:
		return r.Count == 0 && len(r.Reason) <= ReasonBytesMax
	}
	return false
}
