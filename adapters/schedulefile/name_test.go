package schedulefile

import (
	"math"
	"testing"
)

// ensure that Name spells a window start as the format says and that
// ParseName inverts it and refuses every other spelling.
func TestName(t *testing.T) {
	for _, tc := range []struct {
		ms   int64
		name string
	}{
		{0, "schedule-0.bucket"},
		{1, "schedule-1.bucket"},
		{60_000, "schedule-60000.bucket"},
		{1_700_000_040_000, "schedule-1700000040000.bucket"},
		{math.MaxInt64, "schedule-9223372036854775807.bucket"},
	} {
		if got := Name(tc.ms); got != tc.name {
			t.Errorf("Name(%d) = %q, want %q", tc.ms, got, tc.name)
		}
		if ms, ok := ParseName(tc.name); !ok || ms != tc.ms {
			t.Errorf("ParseName(%q) = %d, %v, want %d", tc.name, ms, ok, tc.ms)
		}
	}
	for _, name := range []string{
		"",
		"schedule-.bucket",
		"schedule--1.bucket",
		"schedule-+1.bucket",
		"schedule-01.bucket",
		"schedule-00.bucket",
		"schedule-1a.bucket",
		"schedule- 1.bucket",
		"schedule-1 .bucket",
		"schedule-1.5.bucket",
		"schedule-0x10.bucket",
		"schedule-9223372036854775808.bucket",  // MaxInt64 + 1
		"schedule-18446744073709551616.bucket", // past uint64
		"schedule-99999999999999999999999.bucket",
		"schedule-1.bucket.tmp",
		"schedule-1",
		"Schedule-1.bucket",
		"schedule-1.Bucket",
		"xschedule-1.bucket",
		"schedule-\u0661.bucket", // an Arabic-Indic digit one
		"00000000000000000001.log",
	} {
		if ms, ok := ParseName(name); ok {
			t.Errorf("ParseName(%q) = %d, accepted", name, ms)
		}
	}
}
