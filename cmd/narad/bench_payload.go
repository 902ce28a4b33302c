package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// benchID names one bench message: the run (its start, Unix nanoseconds)
// and the message's sequence number within the run.
type benchID struct {
	Run uint64
	Seq uint64
}

// payloadKind is how a bench payload is rendered.
type payloadKind int

const (
	kindJSON   payloadKind = iota // a JSON object: the server splices it verbatim
	kindText                      // UTF-8 text that is not JSON: it comes back as a JSON string
	kindBinary                    // bytes that are not UTF-8: they come back as base64
)

// payloadModes are the values of bench --payload.
var payloadModes = []string{"json", "text", "binary", "mixed"}

// kindFor picks the kind of message seq under mode; mixed rotates all three.
func kindFor(mode string, seq uint64) payloadKind {
	switch mode {
	case "text":
		return kindText
	case "binary":
		return kindBinary
	case "mixed":
		return payloadKind(seq % 3)
	}
	return kindJSON
}

// Layout of a binary payload: magic, run, sequence, send time, then filler.
// The magic's first byte (0xff) can never start UTF-8, so the server always
// renders it as base64.
var binaryMagic = [4]byte{0xff, 'N', 'B', '1'}

const binaryHeaderLen = len(binaryMagic) + 3*8

const textPrefix = "narad-bench "

// encodePayload renders id and the send time as a payload of at least size
// bytes (more only when size cannot hold the id).
func encodePayload(kind payloadKind, id benchID, sentNs int64, size int) []byte {
	switch kind {
	case kindText:
		head := fmt.Sprintf("%s%016x %d %d ", textPrefix, id.Run, id.Seq, sentNs)
		return padTo([]byte(head), size, 'x')
	case kindBinary:
		b := make([]byte, binaryHeaderLen, max(size, binaryHeaderLen))
		copy(b, binaryMagic[:])
		binary.BigEndian.PutUint64(b[4:], id.Run)
		binary.BigEndian.PutUint64(b[12:], id.Seq)
		binary.BigEndian.PutUint64(b[20:], uint64(sentNs))
		for i := len(b); i < size; i++ {
			b = append(b, byte(uint64(i)*31+id.Seq))
		}
		return b
	}
	head := fmt.Sprintf(`{"narad_bench":"%016x","seq":%d,"sent_ns":%d,"pad":"`, id.Run, id.Seq, sentNs)
	b := padTo([]byte(head), size-2, 'x')
	return append(b, '"', '}')
}

func padTo(b []byte, size int, c byte) []byte {
	for len(b) < size {
		b = append(b, c)
	}
	return b
}

// decodePayload reads back what encodePayload wrote, from a message's
// decoded body; ok is false for anything bench did not make.
func decodePayload(b []byte) (id benchID, sentNs int64, ok bool) {
	switch {
	case len(b) >= binaryHeaderLen && bytes.Equal(b[:4], binaryMagic[:]):
		id.Run = binary.BigEndian.Uint64(b[4:])
		id.Seq = binary.BigEndian.Uint64(b[12:])
		return id, int64(binary.BigEndian.Uint64(b[20:])), true
	case bytes.HasPrefix(b, []byte(textPrefix)):
		f := strings.Fields(string(b[len(textPrefix):min(len(b), len(textPrefix)+64)]))
		if len(f) < 3 {
			return benchID{}, 0, false
		}
		return parseIDFields(f[0], f[1], f[2])
	case bytes.HasPrefix(b, []byte(`{"narad_bench":`)):
		var v struct {
			Run    string      `json:"narad_bench"`
			Seq    json.Number `json:"seq"`
			SentNs json.Number `json:"sent_ns"`
		}
		if json.Unmarshal(b, &v) != nil {
			return benchID{}, 0, false
		}
		return parseIDFields(v.Run, v.Seq.String(), v.SentNs.String())
	}
	return benchID{}, 0, false
}

func parseIDFields(run, seq, sent string) (benchID, int64, bool) {
	r, err1 := strconv.ParseUint(run, 16, 64)
	s, err2 := strconv.ParseUint(seq, 10, 64)
	t, err3 := strconv.ParseInt(sent, 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return benchID{}, 0, false
	}
	return benchID{Run: r, Seq: s}, t, true
}
