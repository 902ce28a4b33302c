package domain

import (
	"fmt"
	"strconv"
	"strings"
)

// ReceiptHandle identifies one lease: the wire form is
// "<partition>:<offset>:<nonce>", three decimal integers (api.md §2.14.2).
// The nonce is fresh for every lease, so a redelivery gets a new handle.
type ReceiptHandle struct {
	Partition int32
	Offset    int64
	Nonce     uint64
}

// receiptHandleMaxLen bounds a handle's text: two 19-digit int64s, a 20-digit
// uint64 and two colons, with room for leading zeros.
const receiptHandleMaxLen = 128

func (h ReceiptHandle) String() string {
	b := make([]byte, 0, 48)
	b = strconv.AppendInt(b, int64(h.Partition), 10)
	b = append(b, ':')
	b = strconv.AppendInt(b, h.Offset, 10)
	b = append(b, ':')
	b = strconv.AppendUint(b, h.Nonce, 10)
	return string(b)
}

// ParseReceiptHandle parses the wire form. Errors wrap ErrInvalidReceiptHandle.
func ParseReceiptHandle(s string) (ReceiptHandle, error) {
	if len(s) > receiptHandleMaxLen {
		return ReceiptHandle{}, fmt.Errorf("receipt handle longer than %d bytes: %w", receiptHandleMaxLen, ErrInvalidReceiptHandle)
	}
	parts := strings.Split(s, ":")
	if len(parts) != 3 {
		return ReceiptHandle{}, fmt.Errorf("receipt handle %q: want partition:offset:nonce: %w", s, ErrInvalidReceiptHandle)
	}
	p, err1 := strconv.ParseUint(parts[0], 10, 31)
	o, err2 := strconv.ParseUint(parts[1], 10, 63)
	n, err3 := strconv.ParseUint(parts[2], 10, 64)
	switch {
	case err1 != nil:
		return ReceiptHandle{}, fmt.Errorf("receipt handle %q: bad partition: %w", s, ErrInvalidReceiptHandle)
	case err2 != nil:
		return ReceiptHandle{}, fmt.Errorf("receipt handle %q: bad offset: %w", s, ErrInvalidReceiptHandle)
	case err3 != nil || n == 0:
		return ReceiptHandle{}, fmt.Errorf("receipt handle %q: bad nonce: %w", s, ErrInvalidReceiptHandle)
	}
	return ReceiptHandle{Partition: int32(p), Offset: int64(o), Nonce: n}, nil
}
