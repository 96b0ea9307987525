#!/usr/bin/env bash
# Runs kvsim's benchmarks for one or more base revisions and the working
# tree and writes a dated report to benchmarks/evidence/: the hot-path Go
# benchmarks of the last base and the working tree compared with benchstat
# (COUNT runs each, the two alternating) and the whole-run cases of
# benchmarks/perf (RUNS runs each, every base and the working tree
# interleaved), with the machine, the Go version and the commits.
# docs/performance.md explains the cases.
#
#   KVSIM_TRACES=../shared/traces benchmarks/run.sh [-b BASE]... [-n RUNS] [-k COUNT] [-c CASES] [-o FILE]
#
#   -b BASE   git revision to compare against, repeatable (default: -b 5fbfe8f -b HEAD,
#             the per-block reference model and the working tree's own base)
#   -n RUNS   whole runs per case and binary (default 3; the table shows medians)
#   -k COUNT  runs of the hot-path benchmarks a tree, in turn (default 5; 0 skips them)
#   -c CASES  comma-separated whole-run cases (default all; see benchmarks/perf)
#   -o FILE   report path (default benchmarks/evidence/DATE-performance.md)
set -euo pipefail
cd "$(dirname "$0")/.."
bases=() runs=3 count=5 cases="" out=""
while getopts b:n:k:c:o: opt; do
  case $opt in
    b) bases+=("$OPTARG") ;; n) runs=$OPTARG ;; k) count=$OPTARG ;; c) cases=$OPTARG ;; o) out=$OPTARG ;;
    *) sed -n '10,17p' "$0"; exit 2 ;;
  esac
done
[ ${#bases[@]} -gt 0 ] || bases=(5fbfe8f HEAD)
: "${KVSIM_TRACES:?set KVSIM_TRACES to the traces folder}"
KVSIM_TRACES=$(cd "$KVSIM_TRACES" && pwd) # absolute: the base trees are elsewhere
export KVSIM_TRACES
out=${out:-benchmarks/evidence/$(date -u +%F)-performance.md}
benchstat="go run golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da"

tmp=$(mktemp -d)
trap 'for i in "${!bases[@]}"; do git worktree remove --force "$tmp/base$i" 2>/dev/null || true; done; rm -rf "$tmp"' EXIT
bins=() names=()
for i in "${!bases[@]}"; do
  git worktree add --detach "$tmp/base$i" "${bases[$i]}" > /dev/null
  (cd "$tmp/base$i" && go build -o "$tmp/kvsim-base$i" ./cmd/kvsim)
  names+=("$(git rev-parse --short "${bases[$i]}")")
  bins+=(-bin "${names[$i]}=$tmp/kvsim-base$i")
done
go build -o "$tmp/kvsim-head" ./cmd/kvsim
last=$((${#bases[@]} - 1))

commit=$(git rev-parse --short HEAD)
if [ -n "$(git status --porcelain)" ]; then commit="$commit + uncommitted changes"; fi
{
  echo "# Performance, $(date -u +%F)"
  echo
  echo "- Command: \`KVSIM_TRACES=... benchmarks/run.sh$(printf ' -b %s' "${bases[@]}") -n $runs -k $count${cases:+ -c $cases}\`"
  echo "- Bases: $(for i in "${!bases[@]}"; do printf '%s (%s) ' "${names[$i]}" "${bases[$i]}"; done); head: $commit"
  echo "- Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo); $(go version | cut -d' ' -f3-)"
  echo
  if [ "$count" -gt 0 ]; then
    echo "## Hot paths (go test -bench, $count runs each, ${names[$last]} and head alternating)"
    echo
    # One run of every benchmark at a time, the base's and the working
    # tree's in turn, so that the machine's load falls on both alike.
    for _ in $(seq "$count"); do
      (cd "$tmp/base$last" && go test -run '^$' -bench . -count 1 ./... >> "$tmp/bench-base.txt")
      go test -run '^$' -bench . -count 1 ./... >> "$tmp/bench-head.txt"
    done
    echo '```'
    $benchstat "${names[$last]}=$tmp/bench-base.txt" head="$tmp/bench-head.txt"
    echo '```'
    echo
  fi
  echo "## Whole runs (median of $runs, interleaved)"
  echo
  go run ./benchmarks/perf -runs "$runs" ${cases:+-cases "$cases"} "${bins[@]}" -bin head="$tmp/kvsim-head"
} > "$tmp/report.md"
mv "$tmp/report.md" "$out"
echo "wrote $out"
