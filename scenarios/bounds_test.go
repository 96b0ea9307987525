package scenarios

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/engine"
)

// TestEngineBounds: a value just below each engine knob's least value, as
// engine defines it, is refused at the file, line and key it was written
// at, naming the bound; the least value itself is accepted. gpu_blocks
// also takes 0 (derived), so the value below its bound of 1 is -1.
func TestEngineBounds(t *testing.T) {
	for _, c := range []struct {
		key     string
		min     int
		derived bool // 0 is accepted: derived
	}{
		{"block_size", engine.MinBlockSize, false},
		{"gpu_blocks", engine.MinGPUBlocks, true},
		{"max_num_seqs", engine.MinMaxNumSeqs, false},
		{"max_batched_tokens", engine.MinMaxBatchedTokens, false},
	} {
		key := "cluster.engine." + c.key
		scenario := func(v int) []byte { return fmt.Appendf(nil, "%s  engine: {%s: %d}\n", base, c.key, v) }
		below := c.min - 1
		want := fmt.Sprintf("s.yaml:6: %s: must be at least %d, got %d", key, c.min, below)
		if c.derived {
			if below == 0 {
				below = -1
			}
			want = fmt.Sprintf("s.yaml:6: %s: must be 0 (derived) or at least %d, got %d", key, c.min, below)
		}
		_, err := Parse("s.yaml", scenario(below), nil)
		var ie *InputError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %d: got %v, want %s", key, below, err, want)
		}
		if _, err := Parse("s.yaml", scenario(c.min), nil); err != nil {
			t.Errorf("%s: %d refused: %v", key, c.min, err)
		}
	}
}
