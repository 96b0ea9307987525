#!/usr/bin/env bash
# The KVCR model's figures on the Mooncake conversation trace, 16 workers,
# for kv_aware and least_loaded routing in copy and move mode, at each
# revision given ("head": the working tree): pulls by outcome, parked
# pulls, moved and lost blocks, hit ratios by tier and TTFT. For
# before/after evidence of model changes, one revision after another.
# Prints a markdown table. SETS adds --set values to every run, one value
# a line (for example
# SETS=$'kvcr.bandwidth_gbps=5\nevents=[{at: 30m, remove: [0, 1]}]'),
# POLICIES and MODES narrow the grid.
#   KVSIM_TRACES=../shared/traces benchmarks/kvcr-outcomes.sh BASE [REV...] head
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: benchmarks/kvcr-outcomes.sh REV... (head: the working tree)" >&2; exit 2; }
: "${KVSIM_TRACES:?set KVSIM_TRACES to the traces folder}"
KVSIM_TRACES=$(cd "$KVSIM_TRACES" && pwd) # absolute: the other trees are elsewhere
export KVSIM_TRACES
policies=${POLICIES:-kv_aware least_loaded}
modes=${MODES:-copy move}
sets=()
while IFS= read -r s; do [ -n "$s" ] && sets+=(--set "$s"); done <<< "${SETS:-}"
tmp=$(mktemp -d)
trap 'for d in "$tmp"/tree-*; do git worktree remove --force "$d" 2>/dev/null || true; done; rm -rf "$tmp"' EXIT
i=0
for rev in "$@"; do
  if [ "$rev" = head ]; then
    go build -o "$tmp/kvsim-$i" ./cmd/kvsim
  else
    git worktree add --detach "$tmp/tree-$i" "$rev" > /dev/null
    (cd "$tmp/tree-$i" && go build -o "$tmp/kvsim-$i" ./cmd/kvsim)
  fi
  for pol in $policies; do
    for mode in $modes; do
      "$tmp/kvsim-$i" replay scenarios/conversation-16w.yaml -o "$tmp/out-$i-$pol-$mode" --check \
        --set router.policy="$pol" --set router.hints.mode="$mode" ${sets[@]+"${sets[@]}"} > /dev/null
    done
  done
  i=$((i + 1))
done
python3 - "$tmp" "$policies" "$modes" "$@" <<'PY'
import json, sys
tmp, policies, modes, revs = sys.argv[1], sys.argv[2].split(), sys.argv[3].split(), sys.argv[4:]
print("| routing | mode | revision | success / partial / failed / expired / rejected / superseded | parked | move removed / lost blocks | hit G1 / G2 / pulled | TTFT p50 / p99 ms | GB pulled | digest |")
print("|---|---|---|---|---|---|---|---|---|---|")
for pol in policies:
    for mode in modes:
        for i, rev in enumerate(revs):
            s = json.load(open(f"{tmp}/out-{i}-{pol}-{mode}/summary.json"))
            c, h = s["counters"], s["hit_ratio"]
            rej = sum(v for k, v in c.items() if k.startswith("pulls_rejected"))
            print("| %s | %s | %s | %d / %d / %d / %d / %d / %s | %d | %d / %d | %.3f / %.3f / %.3f | %.1f / %.1f | %.1f | %s |" % (
                pol, mode, rev, c["pulls_success"], c["pulls_partial"], c["pulls_failed"], c["pulls_expired"], rej,
                c.get("pulls_superseded", "—"), c["pulls_parked"], c["move_removed_blocks"], c["move_lost_blocks"],
                h["g1"], h["g2"], h["pulled"], s["ttft"]["p50_ms"], s["ttft"]["p99_ms"], c["bytes_pulled"] / 1e9,
                s["digest"][:12]))
PY
