package deadletter

import (
	"errors"
	"strings"
	"testing"

	"github.com/narad/narad/domain"
)

// Ensure that a dead-letter policy names another valid topic and a count
// within bounds, and that a refusal names the field.
func TestPolicyValidate(t *testing.T) {
	cases := []struct {
		p    Policy
		want string // "" = valid
	}{
		{Policy{Topic: "orders-dlq", MaxReceiveCount: 5}, ""},
		{Policy{Topic: "dlq", MaxReceiveCount: MaxReceiveCountMin}, ""},
		{Policy{Topic: "dlq", MaxReceiveCount: MaxReceiveCountMax}, ""},
		{Policy{Topic: "", MaxReceiveCount: 5}, "dead_letter.topic"},
		{Policy{Topic: "bad name", MaxReceiveCount: 5}, "dead_letter.topic"},
		{Policy{Topic: "orders", MaxReceiveCount: 5}, "another topic"},
		{Policy{Topic: "dlq", MaxReceiveCount: 0}, "max_receive_count must be from 1 to 1000"},
		{Policy{Topic: "dlq", MaxReceiveCount: MaxReceiveCountMax + 1}, "max_receive_count"},
	}
	for _, c := range cases {
		err := c.p.Validate("orders")
		if c.want == "" {
			if err != nil {
				t.Errorf("%+v: %v", c.p, err)
			}
			continue
		}
		if !errors.Is(err, domain.ErrInvalidArgument) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want ErrInvalidArgument saying %q", c.p, err, c.want)
		}
	}
}

// Ensure that only records a table could make are valid, so a replay
// ignores anything else.
func TestRecordValid(t *testing.T) {
	long := strings.Repeat("x", ReasonBytesMax+1)
	for _, c := range []struct {
		r    Record
		want bool
	}{
		{Record{Kind: KindCount, Offset: 0, Count: 1}, true},
		{Record{Kind: KindIntent, Offset: 3, Count: 2}, true},
		{Record{Kind: KindReason, Offset: 3, Reason: "x"}, true},
		{Record{Kind: KindReason, Offset: 3}, true},
		{Record{Kind: KindCount, Offset: 0}, false},
		{Record{Kind: KindCount, Offset: -1, Count: 1}, false},
		{Record{Kind: KindCount, Offset: 0, Count: 1, Reason: "x"}, false},
		{Record{Kind: KindReason, Offset: 0, Count: 1}, false},
		{Record{Kind: KindReason, Offset: 0, Reason: long}, false},
		{Record{Kind: 0, Offset: 0, Count: 1}, false},
		{Record{Kind: 9, Offset: 0, Count: 1}, false},
	} {
		if got := c.r.Valid(); got != c.want {
			t.Errorf("%+v.Valid() = %v, want %v", c.r, got, c.want)
		}
		tab := NewTable()
		tab.Apply(c.r)
		if got := tab.Len() == 1; got != c.want {
			t.Errorf("Apply(%+v) kept it: %v, want %v", c.r, got, c.want)
		}
	}
}
