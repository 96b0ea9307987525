package engine

import (
	"testing"

	"github.com/kvsim/kvsim/des"
)

// BenchmarkRoofEnds times a stretch's pass ends on the roofline timing:
// 255 memory-bound passes of 64 decoding requests (h100 + llama-3.1-8b).
func BenchmarkRoofEnds(b *testing.B) {
	gpu, _ := FindGPU("h100")
	model, _ := FindModel("llama-3.1-8b")
	r := compiled(&Roofline{GPU: gpu, Model: model, TP: 1, MFU: 0.5, MBU: 0.7}).(*rooflinePass)
	w := &Worker{stats: Batch{DecodeTokens: 64, PriorContext: 64 * 1000, AttnPairs: 64 * 1001}, batch: make([]*Seq, 64)}
	ends := make([]des.Time, 0, 300)
	for b.Loop() {
		ends = w.roofEnds(r, append(ends[:0], 0), 256)
	}
}
