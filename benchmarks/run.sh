#!/usr/bin/env bash
# Runs kvsim's benchmarks for a base revision and the working tree and
# writes a dated report to benchmarks/evidence/: the hot-path Go benchmarks
# compared with benchstat (COUNT runs each) and the whole-run cases of
# benchmarks/perf (RUNS runs each, interleaved), with the machine, the Go
# version and the commits. docs/performance.md explains the cases.
#
#   KVSIM_TRACES=../shared/traces benchmarks/run.sh [-b BASE] [-n RUNS] [-k COUNT] [-c CASES] [-o FILE]
#
#   -b BASE   git revision to compare against (default HEAD: the working tree's own base)
#   -n RUNS   whole runs per case and binary (default 3; the table shows medians)
#   -k COUNT  go test -count for the hot-path benchmarks (default 5; 0 skips them)
#   -c CASES  comma-separated whole-run cases (default all; see benchmarks/perf)
#   -o FILE   report path (default benchmarks/evidence/DATE-performance.md)
set -euo pipefail
cd "$(dirname "$0")/.."
base=HEAD runs=3 count=5 cases="" out=""
while getopts b:n:k:c:o: opt; do
  case $opt in
    b) base=$OPTARG ;; n) runs=$OPTARG ;; k) count=$OPTARG ;; c) cases=$OPTARG ;; o) out=$OPTARG ;;
    *) sed -n '8,15p' "$0"; exit 2 ;;
  esac
done
: "${KVSIM_TRACES:?set KVSIM_TRACES to the traces folder}"
KVSIM_TRACES=$(cd "$KVSIM_TRACES" && pwd) # absolute: the base tree is elsewhere
export KVSIM_TRACES
out=${out:-benchmarks/evidence/$(date -u +%F)-performance.md}
benchstat="go run golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da"

tmp=$(mktemp -d)
trap 'git worktree remove --force "$tmp/base" 2>/dev/null || true; rm -rf "$tmp"' EXIT
git worktree add --detach "$tmp/base" "$base" > /dev/null
(cd "$tmp/base" && go build -o "$tmp/kvsim-base" ./cmd/kvsim)
go build -o "$tmp/kvsim-head" ./cmd/kvsim

commit=$(git rev-parse --short HEAD)
if [ -n "$(git status --porcelain)" ]; then commit="$commit + uncommitted changes"; fi
{
  echo "# Performance, $(date -u +%F)"
  echo
  echo "- Command: \`KVSIM_TRACES=... benchmarks/run.sh -b $base -n $runs -k $count${cases:+ -c $cases}\`"
  echo "- Base: $(git rev-parse --short "$base") ($base); head: $commit"
  echo "- Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo); $(go version | cut -d' ' -f3-)"
  echo
  if [ "$count" -gt 0 ]; then
    echo "## Hot paths (go test -bench, $count runs each, base vs head)"
    echo
    (cd "$tmp/base" && go test -run '^$' -bench . -count "$count" ./... > "$tmp/bench-base.txt")
    go test -run '^$' -bench . -count "$count" ./... > "$tmp/bench-head.txt"
    echo '```'
    $benchstat base="$tmp/bench-base.txt" head="$tmp/bench-head.txt"
    echo '```'
    echo
  fi
  echo "## Whole runs (median of $runs, interleaved)"
  echo
  go run ./benchmarks/perf -runs "$runs" ${cases:+-cases "$cases"} -bin base="$tmp/kvsim-base" -bin head="$tmp/kvsim-head"
} > "$tmp/report.md"
mv "$tmp/report.md" "$out"
echo "wrote $out"
