package engine

import (
	"fmt"
	"strings"
	"testing"
)

// TestConfigBounds: a Config with every knob at its least value is valid;
// one below, on any knob, is refused naming the knob and the bound.
func TestConfigBounds(t *testing.T) {
	least := Config{BlockSize: MinBlockSize, GPUBlocks: MinGPUBlocks, MaxNumSeqs: MinMaxNumSeqs, MaxBatchedTokens: MinMaxBatchedTokens}
	if err := least.Validate(); err != nil {
		t.Fatalf("the least values refused: %v", err)
	}
	for _, c := range []struct {
		key  string
		min  int
		knob *int
	}{
		{"block_size", MinBlockSize, &least.BlockSize},
		{"gpu_blocks", MinGPUBlocks, &least.GPUBlocks},
		{"max_num_seqs", MinMaxNumSeqs, &least.MaxNumSeqs},
		{"max_batched_tokens", MinMaxBatchedTokens, &least.MaxBatchedTokens},
	} {
		*c.knob = c.min - 1
		want := fmt.Sprintf("%s must be at least %d", c.key, c.min)
		if err := least.Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s %d: got %v, want %s", c.key, c.min-1, err, want)
		}
		*c.knob = c.min
	}
}
