# jq helpers for the study pages: `jq -L docs/studies -r 'include "study"; ...'` on `kvsim sweep ... --json`.
# r(d): a number with d decimals (— for null). pm(f; d): the mean of f over a grid point's runs ± the half-width of
# its 95 % interval (Student t); for an event's _delta_ column, whose runs are each against their own
# twin, that is the paired interval, as the sweep's own table prints it. rng(f; d): min-max over the runs.
# pointsn(n; f): one Markdown row a grid point of n replicates (run r is replicate r mod n of point r / n); points(f) is pointsn(5; f).
def r(d): if . == null then "—" else (. * pow(10; d) | round) as $n | ($n | fabs | tostring | ("0" * (d + 1 - length)) + .) as $s
  | (if $n < 0 then "-" else "" end) + (if d == 0 then $s else $s[:-d] + "." + $s[-d:] end) end;
def pm(f; d): [.[] | f | numbers] as $x | ($x | length) as $n | (if $n > 0 then $x | add / $n else 0 end) as $m
  | if $n == 0 then "—" elif $n == 1 then $m | r(d)
    else "\($m | r(d)) ± \($x | map(. - $m | . * .) | add / ($n - 1) / $n | sqrt * [12.7062, 4.3027, 3.1824, 2.7764][$n - 2] | r(d))" end;
def rng(f; d): [.[] | f | numbers] | if . == [] then "—" elif min == max then min | r(d) else "\(min | r(d))-\(max | r(d))" end;
def pointsn(n; f): group_by(.run / n | floor)[] | f | "| " + (map(tostring) | join(" | ")) + " |";
def points(f): pointsn(5; f);
def mean(f; d): [.[] | f | numbers] | if . == [] then "—" else add / length | r(d) end;
