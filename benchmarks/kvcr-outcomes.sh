#!/usr/bin/env bash
# The KVCR model's figures on the Mooncake conversation trace, 16 workers,
# for kv_aware and least_loaded routing in copy and move mode, at a base
# revision and at the working tree: pulls by outcome, parked pulls, moved
# and lost blocks, hit ratios by tier and TTFT. For before/after evidence of
# a model change. Prints a markdown table.
#   KVSIM_TRACES=../shared/traces benchmarks/kvcr-outcomes.sh BASE
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:?usage: benchmarks/kvcr-outcomes.sh BASE_REVISION}
: "${KVSIM_TRACES:?set KVSIM_TRACES to the traces folder}"
KVSIM_TRACES=$(cd "$KVSIM_TRACES" && pwd) # absolute: the base tree is elsewhere
export KVSIM_TRACES
tmp=$(mktemp -d)
trap 'git worktree remove --force "$tmp/base" 2>/dev/null || true; rm -rf "$tmp"' EXIT
git worktree add --detach "$tmp/base" "$base" > /dev/null
(cd "$tmp/base" && go build -o "$tmp/kvsim-base" ./cmd/kvsim)
go build -o "$tmp/kvsim-head" ./cmd/kvsim
for bin in base head; do
  for pol in kv_aware least_loaded; do
    for mode in copy move; do
      "$tmp/kvsim-$bin" replay scenarios/conversation-16w.yaml -o "$tmp/out-$bin-$pol-$mode" --check \
        --set router.policy="$pol" --set router.hints.mode="$mode" > /dev/null
    done
  done
done
python3 - "$tmp" <<'PY'
import json, sys
tmp = sys.argv[1]
print("| routing | mode | run | success / partial / failed / expired / rejected / superseded | parked | move removed / lost blocks | hit G1 / G2 / pulled | TTFT p50 / p99 ms | GB pulled |")
print("|---|---|---|---|---|---|---|---|---|")
for pol in ["kv_aware", "least_loaded"]:
    for mode in ["copy", "move"]:
        for bin in ["base", "head"]:
            s = json.load(open(f"{tmp}/out-{bin}-{pol}-{mode}/summary.json"))
            c, h = s["counters"], s["hit_ratio"]
            rej = sum(v for k, v in c.items() if k.startswith("pulls_rejected"))
            print("| %s | %s | %s | %d / %d / %d / %d / %d / %s | %d | %d / %d | %.3f / %.3f / %.3f | %.1f / %.1f | %.1f |" % (
                pol, mode, bin, c["pulls_success"], c["pulls_partial"], c["pulls_failed"], c["pulls_expired"], rej,
                c.get("pulls_superseded", "—"), c["pulls_parked"], c["move_removed_blocks"], c["move_lost_blocks"],
                h["g1"], h["g2"], h["pulled"], s["ttft"]["p50_ms"], s["ttft"]["p99_ms"], c["bytes_pulled"] / 1e9))
PY
