package parquetio

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/compress"
)

// TestPagedZstdBytes compresses pages of the shapes Parquet writes (int64
// columns, few distinct bytes, random bytes, a repeated pattern with noise)
// at sizes from empty to past pageWindow, where pagedZstd hands over to
// Arrow, and at a non-default level, and wants Arrow's codec's bytes for
// every one.
func TestPagedZstdBytes(t *testing.T) {
	c, err := compress.GetCodec(compress.Codecs.Zstd)
	if err != nil {
		t.Fatal(err)
	}
	paged, ok := c.(*pagedZstd)
	if !ok {
		t.Fatalf("the registered zstd codec is %T, not pagedZstd", c)
	}
	arrow := paged.arrowZstd
	rng := rand.New(rand.NewPCG(7, 11))
	sizes := []int{0, 1, 7, 4096, pageWindow - 1, pageWindow, pageWindow + 1, 3 * pageWindow}
	for range 120 {
		sizes = append(sizes, rng.IntN(pageWindow+1), rng.IntN(8192))
	}
	for i, n := range sizes {
		src := page(rng, i%4, n)
		for _, level := range []int{compress.DefaultCompressionLevel, 3} {
			want := arrow.EncodeLevel(nil, src, level)
			if got := paged.EncodeLevel(nil, src, level); !bytes.Equal(got, want) {
				t.Fatalf("page %d (shape %d, %d bytes, level %d): %d bytes, Arrow's codec %d", i, i%4, n, level, len(got), len(want))
			}
		}
	}
}

// page is n bytes of the given shape.
func page(rng *rand.Rand, shape, n int) []byte {
	src := make([]byte, n)
	switch shape {
	case 0: // an int64 column: rising values
		for i := 0; i+8 <= n; i += 8 {
			binary.LittleEndian.PutUint64(src[i:], uint64(i/8)*uint64(rng.IntN(3)+1)+1e9)
		}
	case 1:
		for i := range src {
			src[i] = byte(rng.IntN(4))
		}
	case 2:
		for i := range src {
			src[i] = byte(rng.Uint32())
		}
	case 3:
		pat := make([]byte, 1+rng.IntN(5000))
		for i := range pat {
			pat[i] = byte(rng.Uint32())
		}
		for i := range src {
			src[i] = pat[i%len(pat)] ^ byte(rng.IntN(50)/49)
		}
	}
	return src
}
