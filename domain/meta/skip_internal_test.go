package meta

import (
	"slices"
	"testing"
)

// Ensure that a remote child's skip list stays ascending and unique per
// partition, keeps only the newest RemoteSkipMaxOffsets offsets, and never
// writes through to the record it was read from.
func TestWithSkippedKeepsTheNewestAscending(t *testing.T) {
	t.Parallel()
	full := make([]int64, RemoteSkipMaxOffsets)
	for i := range full {
		full[i] = int64(10 + 2*i)
	}
	read := []PartitionSkip{{Partition: 3, Offsets: full}}
	got := withSkipped(read, 3, 5) // older than every kept offset: falls out at once
	if !slices.Equal(got[0].Offsets, full) {
		t.Fatalf("an offset older than the kept window changed the list")
	}
	got = withSkipped(read, 3, 11)
	if n := len(got[0].Offsets); n != RemoteSkipMaxOffsets || got[0].Offsets[0] != 11 || got[0].Offsets[n-1] != full[n-1] {
		t.Fatalf("after inserting 11: len %d, first %d, last %d", n, got[0].Offsets[0], got[0].Offsets[n-1])
	}
	if !slices.IsSorted(got[0].Offsets) || read[0].Offsets[0] != 10 {
		t.Fatal("list unsorted, or the read record was modified")
	}
	got = withSkipped(got, 1, 4)
	got = withSkipped(got, 1, 4)
	got = withSkipped(got, 7, 0)
	if len(got) != 3 || got[0].Partition != 1 || got[1].Partition != 3 || got[2].Partition != 7 || len(got[0].Offsets) != 1 {
		t.Fatalf("partitions %+v", got[:1])
	}
}

// Ensure that the endpoint of a canonical remote URL names host and port,
// filling in the default port and keeping IPv6 brackets intact.
func TestRemoteEndpoint(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"https://dr.example.com":            "dr.example.com:443",
		"https://dr.example.com/narad":      "dr.example.com:443",
		"https://dr.example.com:8443/narad": "dr.example.com:8443",
		"https://[fd00::1]":                 "[fd00::1]:443",
		"https://[fd00::1]:9443/x":          "[fd00::1]:9443",
		"https://10.0.0.1:443":              "10.0.0.1:443",
	}
	for url, want := range cases {
		if got := remoteEndpoint(url); got != want {
			t.Errorf("remoteEndpoint(%q) = %q, want %q", url, got, want)
		}
	}
}
