package quicpeer

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// frame is one decoded frame. Payload is owned by the frame.
type frame struct {
	Type      byte
	RequestID uint64
	Payload   []byte
}

// knownType reports whether t is a frame type of §10.1.
func knownType(t byte) bool {
	switch t {
	case typeError, typePing, typePong, typeRequest, typeReply, typeAuth, typeCancel:
		return true
	}
	return false
}

// appendFrame appends f's encoding to dst. It refuses a payload above
// framePayloadMaxBytes with ErrFrameTooLarge and an unknown type with
// ErrBadFrame.
func appendFrame(dst []byte, f frame) ([]byte, error) {
	if len(f.Payload) > framePayloadMaxBytes {
		return dst, fmt.Errorf("encode frame of %d bytes (cap %d): %w", len(f.Payload), framePayloadMaxBytes, ErrFrameTooLarge)
	}
	if !knownType(f.Type) {
		return dst, fmt.Errorf("encode frame type %d: %w", f.Type, ErrBadFrame)
	}
	dst = appendHeader(dst, f.Type, f.RequestID, len(f.Payload))
	return append(dst, f.Payload...), nil
}

// appendHeader appends a frame header declaring n payload bytes.
func appendHeader(dst []byte, typ byte, id uint64, n int) []byte {
	dst = binary.BigEndian.AppendUint32(dst, frameMagic)
	dst = append(dst, frameVersion, typ, 0, 0) // version, type, reserved u16
	dst = binary.BigEndian.AppendUint64(dst, id)
	return binary.BigEndian.AppendUint32(dst, uint32(n))
}

// appendRequestFrame appends a request frame for id carrying op and req
// (the caller checked 1+len(req) against the payload cap).
func appendRequestFrame(dst []byte, id uint64, op Op, req []byte) []byte {
	dst = appendHeader(dst, typeRequest, id, 1+len(req))
	return append(append(dst, byte(op)), req...)
}

// readFrame reads one frame from r whose payload may not exceed maxPayload
// (at most framePayloadMaxBytes). A declared length above the cap is refused
// with ErrFrameTooLarge before any payload byte is read; a short read is
// ErrBadFrame wrapping io.ErrUnexpectedEOF (io.EOF when r ended before the
// first byte); other read errors are returned wrapped as they are.
func readFrame(r io.Reader, maxPayload int) (frame, error) {
	var h [frameHeaderBytes]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return frame{}, readErr("frame header", err)
	}
	f, n, err := parseHeader(h[:], maxPayload)
	if err != nil {
		return frame{}, err
	}
	f.Payload, err = readPayload(r, n)
	if err != nil {
		return frame{}, readErr(fmt.Sprintf("frame payload of %d bytes", n), err)
	}
	return f, nil
}

// parseHeader validates a 20-byte header and returns the frame (without
// payload) and its declared payload length.
func parseHeader(h []byte, maxPayload int) (frame, int, error) {
	if m := binary.BigEndian.Uint32(h[0:4]); m != frameMagic {
		return frame{}, 0, fmt.Errorf("frame magic %#08x: %w", m, ErrBadFrame)
	}
	if h[4] != frameVersion {
		return frame{}, 0, fmt.Errorf("frame version %d: %w", h[4], ErrBadFrame)
	}
	if !knownType(h[5]) {
		return frame{}, 0, fmt.Errorf("frame type %d: %w", h[5], ErrBadFrame)
	}
	if h[6] != 0 || h[7] != 0 {
		return frame{}, 0, fmt.Errorf("frame reserved bits set: %w", ErrBadFrame)
	}
	n := uint64(binary.BigEndian.Uint32(h[16:20]))
	if n > uint64(maxPayload) || n > framePayloadMaxBytes {
		return frame{}, 0, fmt.Errorf("frame declares %d payload bytes (cap %d): %w", n, min(maxPayload, framePayloadMaxBytes), ErrFrameTooLarge)
	}
	return frame{Type: h[5], RequestID: binary.BigEndian.Uint64(h[8:16])}, int(n), nil
}

// readPayload reads exactly n bytes. Up to payloadReadInitialBytes are read
// into an exact buffer; larger payloads grow fourfold as they arrive, so a
// truncated stream never costs the declared length.
func readPayload(r io.Reader, n int) ([]byte, error) {
	if n <= payloadReadInitialBytes {
		buf := make([]byte, n)
		_, err := io.ReadFull(r, buf)
		return buf, err
	}
	buf := make([]byte, 0, payloadReadInitialBytes)
	for len(buf) < n {
		if len(buf) == cap(buf) {
			grown := make([]byte, len(buf), min(cap(buf)*4, n))
			copy(grown, buf)
			buf = grown
		}
		m, err := io.ReadFull(r, buf[len(buf):min(cap(buf), n)])
		buf = buf[:len(buf)+m]
		if err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// readErr classifies a read failure: truncation is ErrBadFrame.
func readErr(what string, err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("truncated %s: %w: %w", what, ErrBadFrame, err)
	}
	return fmt.Errorf("read %s: %w", what, err)
}

// errorPayload encodes an error frame's payload: u16 length + message,
// truncated to what a u16 can say.
func errorPayload(msg string) []byte {
	if len(msg) > errorMessageMaxBytes {
		msg = msg[:errorMessageMaxBytes]
	}
	b := binary.BigEndian.AppendUint16(make([]byte, 0, 2+len(msg)), uint16(len(msg)))
	return append(b, msg...)
}

// parseErrorPayload decodes an error frame's payload; anything but exactly
// u16 length + message is ErrBadFrame.
func parseErrorPayload(p []byte) (string, error) {
	if len(p) < 2 || int(binary.BigEndian.Uint16(p)) != len(p)-2 {
		return "", fmt.Errorf("error frame payload of %d bytes: %w", len(p), ErrBadFrame)
	}
	return string(p[2:]), nil
}
