package bootstrap

import (
	"context"

	"github.com/narad/narad/application/fanout"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// withPositions completes the shipper's reports of one parent's cursors
// with the fan-out engine's cursors (each one's next offset and lag) and,
// from logs (nil: unknown), each parent partition's high watermark and
// the commit time of the oldest record the remote has not accepted.
// parent names the parent's incarnation; its Partition is ignored.
func withPositions(reports []ports.RemoteCursorReport, cursors []fanout.CursorStatus, parent domain.PartitionRef,
	logs ports.PartitionReader) []ports.RemoteCursorReport {
	type cursor struct {
		partition int32
		child     string
	}
	at := map[cursor]fanout.CursorStatus{}
	for _, c := range cursors {
		if c.Parent == parent.Topic {
			at[cursor{c.Partition, c.Child}] = c
		}
	}
	hwms := map[int32]int64{}
	for i, r := range reports {
		ref := parent
		ref.Partition = r.Partition
		reports[i].NextOffset, reports[i].HighWatermark = -1, -1
		if logs != nil {
			reports[i].HighWatermark = highWatermark(logs, ref, hwms)
		}
		c, ok := at[cursor{r.Partition, r.Child}]
		if !ok {
			continue
		}
		reports[i].Lag = c.Lag
		reports[i].NextOffset = max(c.NextOffset, -1)
		if logs != nil {
			reports[i].OldestUnsentMs = oldestUnsent(logs, ref, c)
		}
	}
	return reports
}

// highWatermark peeks ref's high watermark once per report (seen holds
// the partitions already peeked); -1 when the log cannot say.
func highWatermark(logs ports.PartitionReader, ref domain.PartitionRef, seen map[int32]int64) int64 {
	if hwm, ok := seen[ref.Partition]; ok {
		return hwm
	}
	hwm := int64(-1)
	if b, err := logs.Bounds(ref); err == nil {
		hwm = b.HighWatermark
	}
	seen[ref.Partition] = hwm
	return hwm
}

// oldestUnsentReadMaxBytes bounds the read of the oldest unsent record.
const oldestUnsentReadMaxBytes = 1 << 20

// oldestUnsent is the commit time of the record at c's position in ref,
// 0 when the cursor is at the tail or the record cannot be read.
func oldestUnsent(logs ports.PartitionReader, ref domain.PartitionRef, c fanout.CursorStatus) int64 {
	if c.Lag <= 0 || c.NextOffset < 0 {
		return 0
	}
	recs, err := logs.Read(context.Background(), ref, c.NextOffset, 1, oldestUnsentReadMaxBytes)
	if err != nil || len(recs) == 0 {
		return 0
	}
	return recs[0].CommittedAtMs
}
