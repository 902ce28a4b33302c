package consume_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/narad/narad/application/consume"
	"github.com/narad/narad/domain"
)

// BenchmarkReserveAck keeps 1,024 leases in flight on one partition and
// measures one pinned reserve (with its read) plus one ack of the oldest
// lease through the Service, on the fakes.
func BenchmarkReserveAck(b *testing.B) { benchReserveAck(b, false) }

// BenchmarkReserveAckDeadLetter is BenchmarkReserveAck on a topic with a
// dead-letter policy: each reserve also counts its receive (the fake log
// answers at once, so this is the use case's own cost, freeze check
// included).
func BenchmarkReserveAckDeadLetter(b *testing.B) { benchReserveAck(b, true) }

func benchReserveAck(b *testing.B, deadLetter bool) {
	const inFlight = 1024
	e := newEnv(b, consume.Options{})
	tp := e.createTopic("bench", 1, nil, nil)
	if deadLetter {
		e.setDeadLetter(tp, "bench-dlq", 1000)
	}
	batch := make([]string, 1000)
	for i := range batch {
		batch[i] = `{"n":1}`
	}
	for range (b.N + inFlight + 999) / 1000 {
		e.produce(tp, 0, batch...)
	}
	ctx := context.Background()
	req := consume.Request{Topic: "bench", Mode: consume.ModePinned, Identity: "bench"}
	ring := make([]domain.ReceiptHandle, 0, inFlight)
	for range inFlight {
		ds, err := e.svc.Consume(ctx, req)
		if err != nil || len(ds) != 1 {
			b.Fatal(len(ds), err)
		}
		ring = append(ring, *ds[0].Handle)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := e.svc.Ack(ctx, "bench", ring[i%inFlight]); err != nil {
			b.Fatal(err)
		}
		ds, err := e.svc.Consume(ctx, req)
		if err != nil || len(ds) != 1 {
			b.Fatal(len(ds), err)
		}
		ring[i%inFlight] = *ds[0].Handle
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "reserve+ack/s")
	e.shutdown()
}

// BenchmarkConsumeBatch consumes 100 records per call over 6 partitions
// (ModeBatch) and acks each batch with one AckBatch, the way narad bench
// --consume-batch 100 drives the service, on the fakes.
func BenchmarkConsumeBatch(b *testing.B) {
	const perCall, partitions = 100, 6
	e := newEnv(b, consume.Options{})
	tp := e.createTopic("bench", partitions, nil, nil)
	batch := make([]string, 1000)
	for i := range batch {
		batch[i] = `{"n":1}`
	}
	perPartition := (b.N*perCall/partitions + 1000) / 1000
	for p := range int32(partitions) {
		for range perPartition {
			e.produce(tp, p, batch...)
		}
	}
	ctx := context.Background()
	req := consume.Request{Topic: "bench", Mode: consume.ModeBatch, Max: perCall, Identity: "bench"}
	handles := make([]domain.ReceiptHandle, 0, perCall)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		ds, err := e.svc.Consume(ctx, req)
		if err != nil || len(ds) == 0 {
			b.Fatal(len(ds), err)
		}
		handles = handles[:0]
		for _, d := range ds {
			handles = append(handles, *d.Handle)
		}
		if _, err := e.svc.AckBatch(ctx, "bench", handles, consume.OpAck); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N*perCall)/b.Elapsed().Seconds(), "msgs/s")
	e.shutdown()
}

// BenchmarkLongPollHandOff has 16 consumers long-poll a 6-partition topic
// while the benchmark commits one record at a time and waits for its ack:
// per op, one commit, the pump's wake and its hand-off to a parked
// consumer, and one ack, on the fakes. In the idle_topics cases as many
// other topics have one consumer parked each and take no traffic: what a
// hand-off costs should not grow with them.
func BenchmarkLongPollHandOff(b *testing.B) {
	for _, idle := range []int{0, 100} {
		b.Run(fmt.Sprintf("idle_topics=%d", idle), func(b *testing.B) { benchHandOff(b, idle) })
	}
}

func benchHandOff(b *testing.B, idleTopics int) {
	const consumers, partitions = 16, 6
	e := newEnv(b, consume.Options{})
	e.run()
	tp := e.createTopic("bench", partitions, nil, nil)
	ctx, cancel := context.WithCancel(context.Background())
	acked := make(chan struct{}, consumers)
	var wg sync.WaitGroup
	for range consumers {
		wg.Go(func() {
			req := consume.Request{Topic: "bench", Wait: time.Minute, Identity: "bench"}
			for ctx.Err() == nil {
				ds, _ := e.svc.Consume(ctx, req)
				for _, d := range ds {
					if err := e.svc.Ack(ctx, "bench", *d.Handle); err == nil {
						acked <- struct{}{}
					}
				}
			}
		})
	}
	for i := range idleTopics {
		name := fmt.Sprintf("idle-%d", i)
		e.createTopic(name, 3, nil, nil)
		wg.Go(func() { _, _ = e.svc.Consume(ctx, consume.Request{Topic: name, Wait: time.Hour, Identity: "idle"}) })
	}
	e.parked(consumers + idleTopics)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		e.produce(tp, int32(i%partitions), `{"n":1}`)
		<-acked
	}
	b.StopTimer()
	cancel()
	wg.Wait()
	e.shutdown()
}
