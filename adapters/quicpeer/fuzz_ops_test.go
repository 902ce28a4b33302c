package quicpeer

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// FuzzCommitRequest ensures that the commit batch decoder never panics,
// refuses only with ErrBadPayload, never returns more records than the cap
// or more key and payload bytes than it was given, and that what it accepts
// re-encodes to a batch that decodes the same.
func FuzzCommitRequest(f *testing.F) {
	f.Add(appendCommitRequest(nil, sampleCommit()))
	f.Add(appendCommitRequest(nil, ports.CommitRequest{Topic: "t", Records: []domain.Record{{Payload: []byte("x")}}}))
	f.Fuzz(func(t *testing.T, data []byte) {
		req, err := decodeCommitRequest(data)
		if err != nil {
			if !errors.Is(err, ErrBadPayload) {
				t.Fatalf("unclassified error: %v", err)
			}
			return
		}
		if len(req.Records) > commitRecordsMaxCount {
			t.Fatalf("%d records above the cap", len(req.Records))
		}
		held := 0
		for _, r := range req.Records {
			held += len(r.Key) + len(r.Payload)
		}
		if held > len(data) {
			t.Fatalf("%d bytes of records from %d bytes of input", held, len(data))
		}
		again, err := decodeCommitRequest(appendCommitRequest(nil, req))
		if err != nil || !reflect.DeepEqual(again, req) {
			t.Fatalf("re-encoding decoded as %+v, %v; want %+v", again, err, req)
		}
	})
}

// FuzzForwardPayloads ensures that the consume, settle and reply decoders
// never panic and refuse only with ErrBadPayload.
func FuzzForwardPayloads(f *testing.F) {
	f.Add(appendConsumeRequest(nil, ports.RemoteConsume{Topic: "t", Mode: ports.ConsumeBatch, Max: 5}))
	f.Add(appendConsumeWith(nil, ports.RemoteConsume{Topic: "t", LocalOnly: true}, consumeToken{from: "n2", ttl: 2 * time.Second}))
	f.Add(appendDeliveries(nil, sampleDeliveries()))
	f.Add(appendAckBatch(nil, "t", []ackItem{{ports.SettleExtend, domain.ReceiptHandle{Offset: 1, Nonce: 2}}}))
	f.Add(appendItemReplies(nil, []error{nil, domain.ErrLeaseGone}))
	f.Add(errReply(domain.Refuse(domain.ErrInvalidArgument, "why")))
	f.Fuzz(func(t *testing.T, data []byte) {
		check := func(what string, err error) {
			if err != nil && !errors.Is(err, ErrBadPayload) {
				t.Fatalf("%s: unclassified error: %v", what, err)
			}
		}
		req, tok, err := decodeConsumeRequest(data)
		check("consume", err)
		if err == nil {
			again, tok2, err := decodeConsumeRequest(appendConsumeWith(nil, req, tok))
			if err != nil || again != req || tok2 != tok {
				t.Fatalf("re-encoding decoded as %+v %+v, %v; want %+v %+v", again, tok2, err, req, tok)
			}
		}
		ds, err := decodeDeliveries(data)
		check("deliveries", err)
		if len(ds) > consumeDeliveriesMaxCount {
			t.Fatalf("%d deliveries above the cap", len(ds))
		}
		_, _, err = decodeSettleRequest(data)
		check("settle", err)
		_, items, err := decodeAckBatch(data)
		check("ack batch", err)
		if len(items) > ackBatchItemsMaxCount {
			t.Fatalf("%d items above the cap", len(items))
		}
		_, err = decodeItemReplies(data, "peer", OpAckBatch)
		check("item replies", err)
		if rp, err := decodeReply(data); err == nil && rp.code != "" {
			if rp.err("peer", OpCommitProduceBatch) == nil {
				t.Fatal("a refusal decoded to no error")
			}
		} else {
			check("reply", err)
		}
	})
}
