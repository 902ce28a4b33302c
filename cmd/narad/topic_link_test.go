package main

import (
	"net/http"
	"testing"
)

// stubAnswer is a remote child's stub as api.md §2.10.2 shows it.
const stubAnswer = `{"name":"orders-eu","partitions":0,"retention_ms":0,"visibility_timeout_ms":0,"max_in_flight_per_partition":0,` +
	`"max_acked_ahead_per_partition":0,"created_at":1783615560,"role":"child","parent":"orders","attach_offsets":[4,0],` +
	`"remote":{"name":"eu","topic":"orders","from":"attach","lanes":1}`

// ensure that topic attach sends the local form without --remote and the
// remote form with it (only the flags given), prints the answer as JSON
// with its warnings on standard error, and refuses the remote flags
// without --remote before any request.
func TestTopicAttach(t *testing.T) {
	t.Parallel()
	report := `{"dry_run":true,"attach_offsets":[4,0],"checks":[{"node":"n1","result":"pass","credential_version":3,"target_serves_ids":true,"rtt_ms":12,"lane_capacity_per_s":800,"warnings":[]}],"warnings":["parent retention below 72 hours"]}`
	answers := map[string]scripted{
		"POST /v1/topics/orders/children": {http.StatusOK, `{"name":"orders","partitions":3,"role":"parent","children":["late"]}`},
		"POST /v1/topics/pay/children":    {http.StatusCreated, stubAnswer + `,"warnings":["parent retention below 72 hours"]}`},
		"POST /v1/topics/dry/children":    {http.StatusOK, report},
		"POST /v1/topics/busy/children":   {http.StatusConflict, `{"error":"the target is unusable","class":"admin_credential","checks":[{"node":"n1","result":"fail","class":"admin_credential"},{"node":"n2","result":"pass"}]}`},
	}
	cases := map[string]wireCase{
		"local": {args: []string{"orders", "late"}, stdout: "{\n  \"name\": \"orders\",", sent: []string{`POST /v1/topics/orders/children {"child":"late"}`}},
		"local_delay": {args: []string{"orders", "late", "--delay", "90s"}, stdout: `"role": "parent"`,
			sent: []string{`POST /v1/topics/orders/children {"child":"late","delay_ms":90000}`}},
		"remote_minimal": {args: []string{"pay", "pay-eu", "--remote", "eu"}, stdout: "\"remote\": {", stderr: "narad: warning: parent retention below 72 hours\n",
			sent: []string{`POST /v1/topics/pay/children {"child":"pay-eu","remote":"eu"}`}},
		"remote_every_flag": {args: []string{"pay", "pay-eu", "--remote", "eu", "--remote-topic", "payments", "--from", "unconsumed", "--lanes", "4", "--delay", "1m"},
			sent: []string{`POST /v1/topics/pay/children {"child":"pay-eu","remote":"eu","remote_topic":"payments","from":"unconsumed","lanes":4,"delay_ms":60000}`}},
		"dry_run": {args: []string{"dry", "dry-eu", "--remote", "eu", "--dry-run", "--from", "earliest"}, stdout: "\"dry_run\": true", stderr: "warning: parent retention below 72 hours",
			sent: []string{`POST /v1/topics/dry/children {"child":"dry-eu","remote":"eu","from":"earliest","dry_run":true}`}},
		"check_refused": {args: []string{"busy", "busy-eu", "--remote", "eu"}, code: 1,
			stderr: "narad: http 409: the target is unusable\n  class: admin_credential\n  n1: fail admin_credential\n  n2: pass\n",
			sent:   []string{`POST /v1/topics/busy/children {"child":"busy-eu","remote":"eu"}`}},
		"remote_topic_without_remote": {args: []string{"orders", "late", "--remote-topic", "x"}, code: 2, stderr: "--remote-topic needs --remote"},
		"from_without_remote":         {args: []string{"orders", "late", "--from", "earliest"}, code: 2, stderr: "--from needs --remote"},
		"lanes_without_remote":        {args: []string{"orders", "late", "--lanes", "2"}, code: 2, stderr: "--lanes needs --remote"},
		"dry_run_without_remote":      {args: []string{"orders", "late", "--dry-run"}, code: 2, stderr: "--dry-run needs --remote"},
		"bad_from":                    {args: []string{"pay", "pay-eu", "--remote", "eu", "--from", "latest"}, code: 2, stderr: `--from must be attach, unconsumed or earliest (got "latest")`},
		"lanes_zero":                  {args: []string{"pay", "pay-eu", "--remote", "eu", "--lanes", "0"}, code: 2, stderr: "--lanes must be 1 to 8 (got 0)"},
		"lanes_nine":                  {args: []string{"pay", "pay-eu", "--remote", "eu", "--lanes", "9"}, code: 2, stderr: "--lanes must be 1 to 8"},
		"delay_forever":               {args: []string{"orders", "late", "--delay", "forever"}, code: 2, stderr: "--delay takes a duration"},
		"one_argument":                {args: []string{"orders"}, code: 2, stderr: "needs 2 argument(s): parent child"},
	}
	runWireCases(t, []string{"topic", "attach"}, answers, cases)
}

// ensure that topic detach sends force=true only with --force and shows
// what a refused detach has left to ship.
func TestTopicDetach(t *testing.T) {
	t.Parallel()
	answers := map[string]scripted{
		"DELETE /v1/topics/orders/children/late":      {http.StatusNoContent, ""},
		"DELETE /v1/topics/orders/children/orders-eu": {http.StatusConflict, `{"error":"remote child \"orders-eu\" has unshipped records","lag_messages":42,"lag_complete":false,"dispatch_backlog":{"n2":5,"n1":0},"not_answering":["n3"]}`},
	}
	cases := map[string]wireCase{
		"local":       {args: []string{"orders", "late"}, stdout: "\"late\" detached from \"orders\"\n", sent: []string{"DELETE /v1/topics/orders/children/late"}},
		"force":       {args: []string{"orders", "late", "--force"}, stdout: "detached", sent: []string{"DELETE /v1/topics/orders/children/late?force=true"}},
		"escaped":     {args: []string{"a/b", "c d"}, code: 1, stderr: "http 404", sent: []string{"DELETE /v1/topics/a%2Fb/children/c%20d"}},
		"no_argument": {code: 2, stderr: "needs 2 argument(s): parent child"},
		"unshipped": {args: []string{"orders", "orders-eu"}, code: 1,
			stderr: "narad: http 409: remote child \"orders-eu\" has unshipped records\n  unshipped: at least 42 message(s); --force abandons them\n  n1 holds 0 accepted record(s)\n  n2 holds 5 accepted record(s)\n  not answering: n3\n",
			sent:   []string{"DELETE /v1/topics/orders/children/orders-eu"}},
	}
	runWireCases(t, []string{"topic", "detach"}, answers, cases)
}

// ensure that pause, resume and skip send their bodies, print the stub,
// and that skip needs both coordinates.
func TestTopicPauseResumeSkip(t *testing.T) {
	t.Parallel()
	stub := scripted{http.StatusOK, stubAnswer + "}"}
	answers := map[string]scripted{
		"POST /v1/topics/orders/children/orders-eu/pause":  stub,
		"POST /v1/topics/orders/children/orders-eu/resume": stub,
		"POST /v1/topics/orders/children/orders-eu/skip":   stub,
		"POST /v1/topics/orders/children/stuck/skip":       {http.StatusConflict, `{"error":"the link is not stuck on that record","blocked_at":{"partition":1,"offset":9,"state":"record_too_large"}}`},
		"POST /v1/topics/orders/children/moved/resume":     {http.StatusConflict, `{"error":"the target topic was recreated","class":"target_replaced"}`},
		"POST /v1/topics/orders/children/off/pause":        {http.StatusForbidden, `{"error":"remotes require security"}`},
	}
	const path = "/v1/topics/orders/children/"
	cases := map[string]wireCase{
		"pause":           {args: []string{"pause", "orders", "orders-eu", "--reason", "target maintenance"}, stdout: "\"name\": \"orders-eu\"", sent: []string{"POST " + path + `orders-eu/pause {"reason":"target maintenance"}`}},
		"pause_no_reason": {args: []string{"pause", "orders", "orders-eu"}, sent: []string{"POST " + path + "orders-eu/pause {}"}},
		"pause_security_off": {args: []string{"pause", "orders", "off"}, code: 1, stderr: "narad: http 403: remotes require security",
			sent: []string{"POST " + path + "off/pause {}"}},
		"resume":          {args: []string{"resume", "orders", "orders-eu"}, stdout: "\"role\": \"child\"", sent: []string{"POST " + path + `orders-eu/resume {"accept_target":false}`}},
		"resume_accept":   {args: []string{"resume", "orders", "orders-eu", "--accept-target"}, sent: []string{"POST " + path + `orders-eu/resume {"accept_target":true}`}},
		"resume_replaced": {args: []string{"resume", "orders", "moved"}, code: 1, stderr: "http 409: the target topic was recreated\n  class: target_replaced\n", sent: []string{"POST " + path + `moved/resume {"accept_target":false}`}},
		"skip":            {args: []string{"skip", "orders", "orders-eu", "--partition", "0", "--offset", "7"}, stdout: "\"parent\": \"orders\"", sent: []string{"POST " + path + `orders-eu/skip {"partition":0,"offset":7}`}},
		"skip_elsewhere": {args: []string{"skip", "orders", "stuck", "--partition", "1", "--offset", "7"}, code: 1, stderr: "  blocked at partition 1 offset 9 (record_too_large)\n",
			sent: []string{"POST " + path + `stuck/skip {"partition":1,"offset":7}`}},
		"skip_no_offset":    {args: []string{"skip", "orders", "orders-eu", "--partition", "0"}, code: 2, stderr: "skip needs --partition and --offset"},
		"skip_no_partition": {args: []string{"skip", "orders", "orders-eu", "--offset", "3"}, code: 2, stderr: "skip needs --partition and --offset"},
		"skip_negative":     {args: []string{"skip", "orders", "orders-eu", "--partition", "0", "--offset", "-1"}, code: 2, stderr: "must be >= 0"},
		"pause_one_arg":     {args: []string{"pause", "orders"}, code: 2, stderr: "needs 2 argument(s): parent child"},
	}
	runWireCases(t, []string{"topic"}, answers, cases)
}
