package engine

// The least value of each integer knob of Config. Config.Validate refuses
// less, and the scenario's validation refuses less under the knob's
// cluster.engine key (gpu_blocks also takes 0 there: derived from the
// hardware).
const (
	MinBlockSize        = 1 // block_size, tokens
	MinGPUBlocks        = 1 // gpu_blocks
	MinMaxNumSeqs       = 1 // max_num_seqs
	MinMaxBatchedTokens = 1 // max_batched_tokens, tokens
)
