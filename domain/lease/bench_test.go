package lease

import "testing"

// BenchmarkReserveAck measures one reserve plus one ack with 1,024 leases in
// flight, acks landing at the frontier (the steady state of a busy queue).
func BenchmarkReserveAck(b *testing.B) {
	const inFlight = 1024
	s := NewShard(-1, nil, Caps{MaxInFlight: inFlight + 1, MaxAckedAhead: 1024}, [32]byte{7})
	hwm := int64(1 << 62)
	held := make([]Lease, 0, inFlight)
	for i := 0; i < inFlight; i++ {
		l, _ := s.Reserve(0, hwm, 0, 1<<40)
		held = append(held, l)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		l, ok := s.Reserve(0, hwm, 0, 1<<40)
		if !ok {
			b.Fatal("nothing reserved")
		}
		oldest := held[i%inFlight]
		if err := s.Ack(oldest.Offset, oldest.Nonce, 0); err != nil {
			b.Fatal(err)
		}
		held[i%inFlight] = l
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "reserve+ack/s")
}
