package segmentlog

import (
	"fmt"
	"runtime"

	"github.com/klauspost/compress/zstd"
)

// Codec names how a frame's payload is stored. The values are the frame flag
// bits 0-2: part of the on-disk format.
type Codec uint8

// Codecs. Reads always use the codec the frame's flags name.
const (
	CodecNone Codec = 0
	CodecZstd Codec = 1
)

func (c Codec) known() bool { return c == CodecNone || c == CodecZstd }

func (c Codec) String() string {
	switch c {
	case CodecNone:
		return "none"
	case CodecZstd:
		return "zstd"
	}
	return fmt.Sprintf("codec(%d)", uint8(c))
}

// ParseCodec maps the storage.codec setting ("none" or "zstd") to a Codec.
func ParseCodec(s string) (Codec, error) {
	switch s {
	case "", "none":
		return CodecNone, nil
	case "zstd":
		return CodecZstd, nil
	}
	return 0, fmt.Errorf("codec %q (want none or zstd): %w", s, ErrInvalidOptions)
}

// Level is the zstd compression level (storage.compression_level).
type Level uint8

// Levels. The zero value is LevelDefault.
const (
	LevelDefault Level = iota
	LevelFastest
	LevelBetter
	LevelBest
)

func (l Level) String() string {
	switch l {
	case LevelDefault:
		return "default"
	case LevelFastest:
		return "fastest"
	case LevelBetter:
		return "better"
	case LevelBest:
		return "best"
	}
	return fmt.Sprintf("level(%d)", uint8(l))
}

// ParseLevel maps "fastest", "default", "better" or "best" to a Level.
func ParseLevel(s string) (Level, error) {
	for l := LevelDefault; l <= LevelBest; l++ {
		if s == l.String() {
			return l, nil
		}
	}
	if s == "" {
		return LevelDefault, nil
	}
	return 0, fmt.Errorf("compression level %q (want fastest, default, better or best): %w", s, ErrInvalidOptions)
}

func (l Level) zstd() (zstd.EncoderLevel, bool) {
	switch l {
	case LevelDefault:
		return zstd.SpeedDefault, true
	case LevelFastest:
		return zstd.SpeedFastest, true
	case LevelBetter:
		return zstd.SpeedBetterCompression, true
	case LevelBest:
		return zstd.SpeedBestCompression, true
	}
	return 0, false
}

// codecSet writes with one codec and reads every codec. Its zstd encoders
// and decoders are pooled: at most codecPoolSize idle of each, single
// threaded encoders, low-memory decoders.
type codecSet struct {
	write    Codec
	level    zstd.EncoderLevel
	encoders chan *zstd.Encoder
	decoders chan *zstd.Decoder
}

func codecPoolSize() int {
	return min(max(runtime.GOMAXPROCS(0), codecPoolMin), codecPoolMax)
}

func newCodecSet(write Codec, level Level) (*codecSet, error) {
	if !write.known() {
		return nil, fmt.Errorf("codec %d: %w", write, ErrInvalidOptions)
	}
	zl, ok := level.zstd()
	if !ok {
		return nil, fmt.Errorf("compression level %d: %w", level, ErrInvalidOptions)
	}
	n := codecPoolSize()
	return &codecSet{
		write:    write,
		level:    zl,
		encoders: make(chan *zstd.Encoder, n),
		decoders: make(chan *zstd.Decoder, n),
	}, nil
}

// compress appends src, stored with the write codec, to dst.
func (c *codecSet) compress(dst, src []byte) []byte {
	if c.write == CodecNone {
		return append(dst, src...)
	}
	enc := c.encoder()
	dst = enc.EncodeAll(src, dst)
	select {
	case c.encoders <- enc:
	default:
		_ = enc.Close()
	}
	return dst
}

func (c *codecSet) encoder() *zstd.Encoder {
	select {
	case enc := <-c.encoders:
		return enc
	default:
	}
	enc, err := zstd.NewWriter(nil,
		zstd.WithEncoderLevel(c.level),
		zstd.WithEncoderConcurrency(1),
		zstd.WithEncoderCRC(false), // the frame's CRC-32C covers the payload
		zstd.WithLowerEncoderMem(true),
	)
	if err != nil {
		panic(fmt.Sprintf("segmentlog: zstd encoder with fixed options: %v", err))
	}
	return enc
}

// decompress returns the inner bytes of a verified frame's payload. The
// result is freshly allocated (records point into it) and its length must be
// the header's uncompressed size.
func (c *codecSet) decompress(h frameHeader, payload []byte) ([]byte, error) {
	switch h.codec() {
	case CodecNone:
		return payload, nil
	case CodecZstd:
	default:
		return nil, fmt.Errorf("%w: unknown codec %d", ErrCorruptFrame, h.codec())
	}
	var zh zstd.Header
	if err := zh.Decode(payload); err != nil || (zh.HasFCS && zh.FrameContentSize != uint64(h.rawSize)) {
		return nil, fmt.Errorf("%w: zstd header does not promise %d bytes", ErrCorruptFrame, h.rawSize)
	}
	dec := c.decoder()
	inner, err := dec.DecodeAll(payload, nil)
	select {
	case c.decoders <- dec:
	default:
		dec.Close()
	}
	if err != nil {
		return nil, fmt.Errorf("%w: zstd: %v", ErrCorruptFrame, err)
	}
	if len(inner) != int(h.rawSize) {
		return nil, fmt.Errorf("%w: decoded %d bytes, header says %d", ErrCorruptFrame, len(inner), h.rawSize)
	}
	return inner, nil
}

func (c *codecSet) decoder() *zstd.Decoder {
	select {
	case dec := <-c.decoders:
		return dec
	default:
	}
	dec, err := zstd.NewReader(nil,
		zstd.WithDecoderConcurrency(1),
		zstd.WithDecoderLowmem(true),
		zstd.WithDecoderMaxMemory(frameSizeMaxBytes),
	)
	if err != nil {
		panic(fmt.Sprintf("segmentlog: zstd decoder with fixed options: %v", err))
	}
	return dec
}

// close releases the pooled codecs.
func (c *codecSet) close() {
	for {
		select {
		case enc := <-c.encoders:
			_ = enc.Close()
		case dec := <-c.decoders:
			dec.Close()
		default:
			return
		}
	}
}
