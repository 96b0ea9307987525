package sim

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/kvsim/kvsim/internal/scengen"
	"github.com/kvsim/kvsim/scenarios"
)

func TestZZDumpDigests(t *testing.T) {
	out := os.Getenv("ZZ_OUT")
	if out == "" {
		t.Skip()
	}
	f, _ := os.Create(out)
	defer f.Close()
	var from, n uint64 = 1, 3000
	fmt.Sscan(os.Getenv("ZZ_FROM"), &from)
	fmt.Sscan(os.Getenv("ZZ_N"), &n)
	for seed := from; seed < from+n; seed++ {
		c := scengen.Generate(seed)
		if os.Getenv("ZZ_LARGE") != "" {
			c = scengen.GenerateLarge(seed)
		}
		dir := t.TempDir()
		path, err := c.Write(dir)
		if err != nil {
			t.Fatal(err)
		}
		sc, err := scenarios.Load(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Run(context.Background(), sc, Options{Check: true})
		if err != nil {
			fmt.Fprintf(f, "%d err %v\n", seed, err)
			continue
		}
		fmt.Fprintf(f, "%d %s\n", seed, res.Summary.Digest)
	}
}
