#!/usr/bin/env bash
# Same-run ratio pairs: runs the bench ROUNDS times with two engines, alternating which one goes
# first, and prints engine A's ops/s over engine B's for each run and thread count, then the
# median, min and max. One run is one sample of a noisy machine; the median of several is the
# figure to quote. Each run is a fresh JVM with both engines side by side, so a ratio never mixes
# two moments of the machine.
#
# Usage: bench/pairs.sh ROUNDS ENGINE_A ENGINE_B SCENARIO [more bench options]
#   e.g. bench/pairs.sh 6 hashlog chronicle-map readrandom
# Default bench options: --warmup 2 --duration 5 (given options come after and win).
# Needs bench/target/kv4j-bench.jar (mvn -B -q package -DskipTests).
set -euo pipefail

if (($# < 4)); then
  sed -n '2,12p' "$0" >&2
  exit 2
fi
rounds=$1 a=$2 b=$3 scenario=$4
shift 4
here=$(cd "$(dirname "$0")" && pwd)
jar=$here/target/kv4j-bench.jar
[[ -f $jar ]] || { echo "pairs.sh: $jar missing; run mvn -B -q package -DskipTests" >&2; exit 2; }
# Java 24+ warns when Chronicle Map, MapDB or lmdbjava's raw baseline use sun.misc.Unsafe's memory
# methods (JEP 498) unless this flag allows them; a manifest cannot carry it, Java 17-22 reject it.
java_major=$(java -version 2>&1 | awk -F'"' '/version/ { split($2, v, "."); print v[1]; exit }')
jvm_flags=()
if ((java_major >= 24)); then jvm_flags=(--sun-misc-unsafe-memory-access=allow); fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
ratios=$out/ratios

echo "Command: bench/pairs.sh $rounds $a $b $scenario${*:+ $*}"
echo "Machine: $(nproc) cores, $(java -version 2>&1 | head -1), load average $(cut -d' ' -f1-3 /proc/loadavg)"
for ((i = 1; i <= rounds; i++)); do
  if ((i % 2)); then order=$a,$b; else order=$b,$a; fi
  java ${jvm_flags[@]+"${jvm_flags[@]}"} -jar "$jar" --engines "$order" --scenarios "$scenario" --warmup 2 --duration 5 "$@" \
    --out "$out/run" > "$out/log" 2>&1 || { cat "$out/log" >&2; exit 1; }
  # results.csv: engine,scenario,phase,threads,...,ops_per_sec (8th column), error (17th).
  awk -F, -v a="$a" -v b="$b" -v s="$scenario" -v run="$i" -v order="$order" -v rf="$ratios" '
    $2 == s && $17 == "" { ops[$1 "," $3 "," $4] = $8; key[$3 "," $4] = 1 }
    END {
      for (k in key) {
        split(k, pt, ",")
        x = ops[a "," k]; y = ops[b "," k]
        if (x > 0 && y > 0) {
          label = pt[1] == "" ? pt[2] "t" : pt[1] " " pt[2] "t"
          printf "run %d (%s first) %s: %s %.0f/s, %s %.0f/s, ratio %.2f\n", \
            run, order == a "," b ? a : b, label, a, x, b, y, x / y
          print label "\t" x / y >> rf
        }
      }
    }' "$out/run/results.csv"
done

echo "$a / $b, $scenario, $rounds runs (ops/s ratio per run; median, min, max):"
cut -f1 "$ratios" | sort -u | while read -r label; do
  awk -F'\t' -v l="$label" '$1 == l { print $2 }' "$ratios" | sort -g |
    awk -v l="$label" '{ v[NR] = $1 } END {
      m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
      s = ""; for (i = 1; i <= NR; i++) s = s sprintf(" %.2f", v[i])
      printf "  %s: median %.2fx, min %.2fx, max %.2fx (sorted:%s)\n", l, m, v[1], v[NR], s
    }'
done
