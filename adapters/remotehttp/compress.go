package remotehttp

import (
	"github.com/klauspost/compress/zstd"

	"github.com/narad/narad/domain/remote"
)

// zstdEncoder compresses request bodies; EncodeAll is safe for concurrent
// use. One encoder per process: its state is reused across requests.
var zstdEncoder, _ = zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedDefault))

// zstdEncoding is the Content-Encoding of a compressed body.
const zstdEncoding = "zstd"

// compressed returns body zstd-compressed when that saves at least 10 %
// (internals.md §7.2 "Compression"), else body itself and false.
func compressed(body []byte) ([]byte, bool) {
	if len(body) == 0 {
		return body, false
	}
	out := zstdEncoder.EncodeAll(body, make([]byte, 0, len(body)/2))
	if !remote.WorthCompressing(len(body), len(out)) {
		return body, false
	}
	return out, true
}
