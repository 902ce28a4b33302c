package schedulefile

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/domain"
)

// benchRestartBatches bounds the bucket file a benchmark grows on MemFS
// before it starts a fresh one (off the clock).
const benchRestartBatches = 256

// BenchmarkAppend appends one batch of 100 records of 256 B per op on
// MemFS: the encode, one WriteAt and one fdatasync.
func BenchmarkAppend(b *testing.B) {
	recs := make([]domain.Record, 100)
	for i := range recs {
		recs[i] = domain.Record{DeliverAtMs: bucketMs + int64(i), Key: []byte(fmt.Sprintf("key-%03d", i)), Payload: bytes.Repeat([]byte{byte(i)}, 256)}
	}
	var bk *Bucket
	fresh := func() {
		if bk != nil {
			_ = bk.Close()
		}
		mem := vfs.NewMem()
		if err := mem.MkdirAll(partDir); err != nil {
			b.Fatal(err)
		}
		var err error
		if bk, _, err = Open(mem, bucketPath, true); err != nil {
			b.Fatal(err)
		}
	}
	fresh()
	b.ReportAllocs()
	b.SetBytes(int64(len(recs) * 256))
	for n := 0; b.Loop(); n++ {
		if n%benchRestartBatches == benchRestartBatches-1 {
			b.StopTimer()
			fresh()
			b.StartTimer()
		}
		if _, err := bk.Append(recs); err != nil {
			b.Fatal(err)
		}
	}
	_ = bk.Close()
}
