package parquetio

import (
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/klauspost/compress/zstd"
)

// Arrow's zstd codec encodes every Parquet page with an encoder whose
// history buffer is twice its 8 MB window, 16 MB however small the page,
// and keeps its encoders in a sync.Pool, which each garbage collection
// empties: on a million-request run that is 0.5 GB allocated in history
// buffers, and 16 MB live for every table encoding at the same time.
// kvsim's data pages are about 64 KB (dataPageSize) and its dictionary
// pages at most about 1 MB (Parquet's default dictionary page size), and
// for an input no longer than the window a 1 MB-window encoder makes the
// same bytes (the frame is a single segment either way, and no match can
// reach further back than the input), so pagedZstd encodes such pages with
// 1 MB-window encoders kept on a free list of its own and leaves
// everything else (larger pages, other levels, decoding, streams) to
// Arrow's codec. TestPagedZstdBytes holds it to Arrow's bytes.
type pagedZstd struct {
	arrowZstd
	free chan *zstd.Encoder
}

// arrowZstd is what Arrow's zstd codec implements.
type arrowZstd interface {
	compress.ErrorCodec
	compress.StreamingCodec
}

// pageWindow is the window of pagedZstd's encoders and the largest page
// they encode.
const pageWindow = 1 << 20

func init() {
	c, err := compress.GetCodec(compress.Codecs.Zstd)
	if err != nil {
		panic(err)
	}
	compress.RegisterCodec(compress.Codecs.Zstd, newPagedZstd(c.(arrowZstd)))
}

// newPagedZstd is base with pagedZstd's page encoding.
func newPagedZstd(base arrowZstd) *pagedZstd {
	return &pagedZstd{arrowZstd: base, free: make(chan *zstd.Encoder, 8)}
}

// EncodeLevel is Arrow's, with pages up to pageWindow at the default level
// encoded by a small-window encoder.
func (z *pagedZstd) EncodeLevel(dst, src []byte, level int) []byte {
	if level != compress.DefaultCompressionLevel || len(src) > pageWindow {
		return z.arrowZstd.EncodeLevel(dst, src, level)
	}
	var enc *zstd.Encoder
	select {
	case enc = <-z.free:
	default:
		// Arrow's options for its pooled encoders, with the small window
		// and lower encoder memory (TestPagedZstdBytes: the same bytes).
		// The options are valid, so NewWriter cannot fail.
		enc, _ = zstd.NewWriter(nil, zstd.WithZeroFrames(true), zstd.WithEncoderLevel(zstd.SpeedDefault),
			zstd.WithEncoderConcurrency(1), zstd.WithAllLitEntropyCompression(true),
			zstd.WithWindowSize(pageWindow), zstd.WithLowerEncoderMem(true))
	}
	out := enc.EncodeAll(src, dst[:0])
	select {
	case z.free <- enc:
	default: // more encoders at once than the list keeps: let this one go
	}
	return out
}
