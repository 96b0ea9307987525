#!/usr/bin/env bash
# Wall time and memory of the Mooncake conversation trace on 16 workers with
# KVCR off and on, for kv_aware and least_loaded routing, RUNS times each
# (interleaved, so machine noise spreads evenly), and the model figures of
# each configuration. Prints a markdown table.
#   KVSIM_TRACES=../shared/traces benchmarks/kvcr-overhead.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
: "${KVSIM_TRACES:?set KVSIM_TRACES to the traces folder}"
export KVSIM_TRACES
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/kvsim" ./cmd/kvsim
configs="kv_aware:false kv_aware:true least_loaded:false least_loaded:true"
for r in $(seq "$runs"); do
  for c in $configs; do
    pol=${c%:*} kv=${c#*:}
    /usr/bin/time -f "%e %M" -o "$tmp/time-$pol-$kv-$r" "$tmp/kvsim" replay scenarios/conversation-16w.yaml \
      -o "$tmp/out-$pol-$kv" --force --set router.policy="$pol" --set kvcr.enabled="$kv" > /dev/null
  done
done
python3 - "$tmp" "$runs" <<'PY'
import json, statistics, sys
tmp, runs = sys.argv[1], int(sys.argv[2])
print("| routing | KVCR | wall s (median of %d) | runs | peak RSS MB | G1 / G2 / pulled hit | TTFT p50 / p99 ms | pulls: success / partial / failed / expired / rejected | GB pulled |" % runs)
print("|---|---|---|---|---|---|---|---|---|")
base = {}
for pol in ["kv_aware", "least_loaded"]:
    for kv in ["false", "true"]:
        t = [open(f"{tmp}/time-{pol}-{kv}-{r}").read().split() for r in range(1, runs + 1)]
        wall = statistics.median(float(x[0]) for x in t)
        rss = max(int(x[1]) for x in t) // 1024
        s = json.load(open(f"{tmp}/out-{pol}-{kv}/summary.json"))
        c, h = s["counters"], s["hit_ratio"]
        rej = sum(c[k] for k in c if k.startswith("pulls_rejected"))
        ratio = ""
        if kv == "false":
            base[pol] = wall
        else:
            ratio = " (%.2fx)" % (wall / base[pol])
        print("| %s | %s | %.2f%s | %s | %d | %.3f / %.3f / %.3f | %.1f / %.1f | %d / %d / %d / %d / %d | %.1f |" % (
            pol, "on" if kv == "true" else "off", wall, ratio, " ".join(x[0] for x in t), rss,
            h["g1"], h["g2"], h["pulled"], s["ttft"]["p50_ms"], s["ttft"]["p99_ms"],
            c["pulls_success"], c["pulls_partial"], c["pulls_failed"], c["pulls_expired"], rej, c["bytes_pulled"] / 1e9))
PY
