package bootstrap

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"
)

type childrenListing struct {
	Parent   string `json:"parent"`
	Children []struct {
		Name        string `json:"name"`
		DelayMs     int64  `json:"delay_ms"`
		LagMessages int64  `json:"lag_messages"`
		LagComplete bool   `json:"lag_complete"`
	} `json:"children"`
}

func listChildren(t *testing.T, base, parent string) childrenListing {
	t.Helper()
	code, body := send(t, "GET", base+"/v1/topics/"+parent+"/children", "", nil)
	var l childrenListing
	if code != 200 {
		t.Fatalf("list children: %d %s", code, body)
	}
	if err := json.Unmarshal([]byte(body), &l); err != nil {
		t.Fatalf("list children %q: %v", body, err)
	}
	return l
}

// ensure that on one node, wired end to end (the engine's lag reader behind
// the topics service), a child attached over HTTP lists with lag_complete
// true once its cursors anchored, within 10 s of the attach (conformance
// 77), and with lag_messages 0 once the records produced after it were
// copied, while a delay child's lag counts the records not yet due.
func TestChildrenLagOnOneNode(t *testing.T) {
	base, _, _ := startedNodeWithStore(t)
	for _, b := range []string{`{"name":"orders","partitions":3}`, `{"name":"audit","partitions":3}`, `{"name":"later"}`} {
		if code, body := send(t, "POST", base+"/v1/topics", b, jsonCT); code != 201 {
			t.Fatalf("create %s: %d %s", b, code, body)
		}
	}
	if code, body := send(t, "POST", base+"/v1/topics/orders/children", `{"child":"audit"}`, jsonCT); code != 200 {
		t.Fatalf("attach: %d %s", code, body)
	}
	attached := time.Now()
	if code, body := send(t, "POST", base+"/v1/topics/orders/children", `{"child":"later","delay_ms":600000}`, jsonCT); code != 200 {
		t.Fatalf("attach the delay child: %d %s", code, body)
	}
	waitUntil(t, "the lag complete after the attach", func() bool {
		l := listChildren(t, base, "orders")
		return len(l.Children) == 2 && l.Children[0].LagComplete && l.Children[1].LagComplete
	})
	if took := time.Since(attached); took > 10*time.Second {
		t.Fatalf("lag_complete after %v, want within 10 s", took)
	}
	var want []string
	for i := range 5 {
		if code, body := send(t, "POST", fmt.Sprintf("%s/v1/topics/orders/produce?key=k%d", base, i), fmt.Sprintf(`{"n":%d}`, i), octet); code != 202 {
			t.Fatalf("produce %d: %d %s", i, code, body)
		}
		want = append(want, fmt.Sprintf(`k%d={"n":%d}`, i, i))
	}
	slices.Sort(want)
	waitUntil(t, "the records in the child", func() bool { return slices.Equal(replayAll(t, base, "audit", 3), want) })
	// The delay child holds the five records for ten minutes: its lag
	// counts them, while the immediate child's drops to 0 once copied.
	waitUntil(t, "lag 0 for the copy, 5 for the delayed one", func() bool {
		l := listChildren(t, base, "orders")
		return len(l.Children) == 2 && l.Children[0].Name == "audit" && l.Children[0].LagMessages == 0 && l.Children[0].LagComplete &&
			l.Children[1].Name == "later" && l.Children[1].DelayMs == 600000 && l.Children[1].LagMessages == 5 && l.Children[1].LagComplete
	})
	if l := listChildren(t, base, "audit"); l.Parent != "audit" || l.Children == nil || len(l.Children) != 0 {
		t.Fatalf("a child's listing: %+v", l)
	}
}
