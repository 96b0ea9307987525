#!/usr/bin/env bash
# Runs every shipped, golden and contract scenario with two kvsim binaries
# (replay --check) and lists the output files whose bytes differ, and the
# runs whose exit codes or printed digests differ: the check that a change
# which is meant to change no behaviour changes none. summary.json is
# compared up to its wall time and manifest, the only fields that vary
# between equal runs, and without its count of events processed, which
# measures the simulator's work (a stretch of quiet passes is one event),
# not the model's results. Exit 0 when nothing differs, 1 otherwise.
#
#   KVSIM_TRACES=../shared/traces benchmarks/same-outputs.sh OLD_KVSIM NEW_KVSIM
#
# Build OLD_KVSIM from the commit before the change (git worktree add, go
# build -o), NEW_KVSIM from the working tree. The contract scenarios are
# read from KVSIM_TRACES/../contract, the measured vLLM runs from
# KVSIM_VLLM_TRACES (default KVSIM_TRACES/../vllm-traces).
set -uo pipefail
[ $# -eq 2 ] || { sed -n '9,14p' "$0"; exit 2; }
cd "$(dirname "$0")/.."
: "${KVSIM_TRACES:?set KVSIM_TRACES to the traces folder}"
KVSIM_TRACES=$(cd "$KVSIM_TRACES" && pwd)
KVSIM_VLLM_TRACES=$(cd "${KVSIM_VLLM_TRACES:-$KVSIM_TRACES/../vllm-traces}" && pwd)
export KVSIM_TRACES KVSIM_VLLM_TRACES
old=$(realpath "$1") new=$(realpath "$2")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
scenarios=(scenarios/*.yaml scenarios/golden/*.yaml "$KVSIM_TRACES"/../contract/*.yaml)

# record BIN SIDE: one line a run and output file, "scenario/file hash".
record() {
  mkdir -p "$work/$2"
  for sc in "${scenarios[@]}"; do
    sc=$(realpath "$sc")
    name=$(basename "$(dirname "$sc")")-$(basename "$sc" .yaml)
    out=$work/$2/$name
    (cd "$(dirname "$sc")" && "$1" replay "$sc" -q --check -o "$out" >"$out.stdout" 2>/dev/null)
    echo "$name exit $?"
    grep '^digest' "$out.stdout" | sed "s|^|$name |"
    [ -d "$out" ] || continue
    for f in "$out"/*; do
      if [ "$(basename "$f")" = summary.json ]; then
        h=$(sed -e '/"wall_time_s"/,$d' -e '/^  "events": [0-9]*,$/d' "$f" | sha256sum)
      else
        h=$(sha256sum <"$f")
      fi
      echo "$name/$(basename "$f") ${h%% *}"
    done
  done
}
record "$old" old >"$work/old.txt"
record "$new" new >"$work/new.txt"
if diff "$work/old.txt" "$work/new.txt"; then
  echo "same outputs: $(grep -c . "$work/new.txt") lines, $(grep -c ' digest ' "$work/new.txt") digests, from ${#scenarios[@]} scenarios"
  exit 0
fi
exit 1
