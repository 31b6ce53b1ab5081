#!/usr/bin/env bash
# Compares kv4j-server (memory and hashlog engines) with redis-server using redis-benchmark,
# same client settings for every target. Usage (from the repository root or server/):
#
#   server/bench.sh                  # defaults below
#   N=200000 ROUNDS=1 server/bench.sh   # a quick run
#
# Environment: N (requests per test, 1000000), D (value bytes, 100), C (clients, 50),
# P (pipeline depth, 16), R (keyspace for -r, 1000000), ROUNDS (3, interleaved),
# WARMUP (requests of each test run, then FLUSHALL, before measuring: 300000), WARMUP_ROUNDS (2),
# TESTS (redis-benchmark tests, "set get mset incr"),
# SERVER_CPU (0) / CLIENT_CPU (1) for taskset, OUT (server/results/<date>),
# TARGETS ("kv4j-memory kv4j-hashlog redis"; also kv4j-hashlog-sync and redis-always: durability
# sync against appendonly with appendfsync always), KV4J_ARGS (extra kv4j-server options),
# HASHLOG_OPTS (appended to the hashlog targets' URI, e.g. "&compaction-threads=0"),
# JAR (the server jar, server/target/kv4j-server.jar).
# Needs: java 17+, redis-server and redis-benchmark (Debian: redis-server, redis-tools),
# util-linux taskset (optional). Builds server/target/kv4j-server.jar if it is missing.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
jar="${JAR:-$here/target/kv4j-server.jar}"
N=${N:-1000000}
D=${D:-100}
C=${C:-50}
P=${P:-16}
R=${R:-1000000}
ROUNDS=${ROUNDS:-3}
WARMUP=${WARMUP:-300000}
WARMUP_ROUNDS=${WARMUP_ROUNDS:-2}
TESTS=${TESTS:-set get mset incr}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
OUT=${OUT:-$here/results/$(date -u +%Y%m%d-%H%M%S)-d$D-p$P}
KV4J_PORT=${KV4J_PORT:-6481}
REDIS_PORT=${REDIS_PORT:-6482}
JAVA_OPTS=${JAVA_OPTS:--Xms2g -Xmx2g -XX:+UseParallelGC -XX:+AlwaysPreTouch}
TARGETS=${TARGETS:-kv4j-memory kv4j-hashlog redis}
KV4J_ARGS=${KV4J_ARGS:-}

for tool in java redis-server redis-benchmark redis-cli; do
  command -v "$tool" >/dev/null || { echo "bench.sh: $tool not found" >&2; exit 1; }
done
if [[ ! -f "$jar" ]]; then
  (cd "$here/.." && mvn -q -f server/pom.xml package -DskipTests)
fi
pin_server=() pin_client=()
if command -v taskset >/dev/null && [[ $(nproc) -ge 2 ]]; then
  pin_server=(taskset -c "$SERVER_CPU")
  pin_client=(taskset -c "$CLIENT_CPU")
fi
mkdir -p "$OUT"
data="$(mktemp -d /tmp/kv4j-bench.XXXXXX)"
server_pid=""
cleanup() {
  if [[ -n "$server_pid" ]]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$data"
}
trap cleanup EXIT

wait_ready() {
  for _ in $(seq 1 1200); do
    if redis-cli -p "$1" PING 2>/dev/null | grep -q PONG; then return 0; fi
    sleep 0.1
  done
  echo "bench.sh: server on port $1 did not start" >&2
  return 1
}

stop_server() {
  kill "$server_pid" 2>/dev/null || true
  wait "$server_pid" 2>/dev/null || true
  server_pid=""
}

start_target() { # name
  case "$1" in
    kv4j-memory)
      "${pin_server[@]}" java $JAVA_OPTS -jar "$jar" --port "$KV4J_PORT" --threads 1 $KV4J_ARGS memory: \
        >"$OUT/$1.log" 2>&1 &
      server_pid=$!; port=$KV4J_PORT ;;
    kv4j-hashlog)
      rm -rf "$data/hashlog"
      "${pin_server[@]}" java $JAVA_OPTS -jar "$jar" --port "$KV4J_PORT" --threads 1 $KV4J_ARGS \
        "hashlog:$data/hashlog?durability=buffered${HASHLOG_OPTS:-}" >"$OUT/$1.log" 2>&1 &
      server_pid=$!; port=$KV4J_PORT ;;
    kv4j-hashlog-sync)
      rm -rf "$data/hashlog"
      "${pin_server[@]}" java $JAVA_OPTS -jar "$jar" --port "$KV4J_PORT" --threads 1 $KV4J_ARGS \
        "hashlog:$data/hashlog?durability=sync${HASHLOG_OPTS:-}" >"$OUT/$1.log" 2>&1 &
      server_pid=$!; port=$KV4J_PORT ;;
    redis-always)
      rm -rf "$data/redis" && mkdir -p "$data/redis"
      "${pin_server[@]}" redis-server --port "$REDIS_PORT" --save '' --appendonly yes \
        --appendfsync always --dir "$data/redis" --io-threads 1 --daemonize no \
        --protected-mode yes --bind 127.0.0.1 >"$OUT/$1.log" 2>&1 &
      server_pid=$!; port=$REDIS_PORT ;;
    redis)
      "${pin_server[@]}" redis-server --port "$REDIS_PORT" --save '' --appendonly no \
        --io-threads 1 --daemonize no --protected-mode yes --bind 127.0.0.1 \
        >"$OUT/$1.log" 2>&1 &
      server_pid=$!; port=$REDIS_PORT ;;
  esac
  wait_ready "$port"
}

bench_args() { # port n tests
  echo "-p $1 -t $3 -n $2 -r $R -d $D -c $C -P $P --csv"
}

{
  echo "# kv4j-server vs redis-server, $(date -u +%FT%TZ)"
  echo "host: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
  echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "java: $(java -version 2>&1 | head -1)"
  echo "redis: $(redis-server --version)"
  echo "server pinned: ${pin_server[*]:-no}; client pinned: ${pin_client[*]:-no}"
  echo "JAVA_OPTS: $JAVA_OPTS; kv4j-server --threads 1; redis --io-threads 1 --save '' --appendonly no"
  echo "hashlog durability: buffered (acknowledged writes survive kill -9, not power loss)"
  echo "redis-benchmark $(bench_args PORT "$N" set\|get); warm-up: $WARMUP of each test, then FLUSHALL, $WARMUP_ROUNDS times"
} | tee "$OUT/environment.txt"

cpu_ticks() { # utime + stime of a process, in clock ticks
  awk '{print $14 + $15}' "/proc/$1/stat"
}
hz=$(getconf CLK_TCK)

echo "round,target,test,rps,avg_ms,min_ms,p50_ms,p95_ms,p99_ms,max_ms,server_cpu_us_per_req" >"$OUT/results.csv"
for round in $(seq 1 "$ROUNDS"); do
  for target in $TARGETS; do
    start_target "$target"
    # Warm-up with the same settings, every test (JIT for the JVM; allocator and caches for both).
    # The JVM's compiler threads share the server's pinned core and their CPU counts in
    # server_cpu_us_per_req: after 40,000 SETs and GETs they still used 5 us per SET of the next
    # 200,000 on hashlog, more than the event loop; after 200,000 of each test, about 0.5 us.
    # The first FLUSHALL runs code paths (scans, deletes) that the warm-up did not, and the JIT
    # throws away compiled methods whose assumptions they break; done once, the next round's
    # measurement would pay their recompilation. So the warm-up, FLUSHALL included, runs
    # WARMUP_ROUNDS times.
    for _ in $(seq 1 "$WARMUP_ROUNDS"); do
      for test in $TESTS; do
        "${pin_client[@]}" redis-benchmark $(bench_args "$port" "$WARMUP" "$test") >/dev/null
      done
      redis-cli -p "$port" FLUSHALL >/dev/null
    done
    for test in $TESTS; do
      echo "${pin_client[*]} redis-benchmark $(bench_args "$port" "$N" "$test")" >>"$OUT/commands.txt"
      before=$(cpu_ticks "$server_pid")
      result=$("${pin_client[@]}" redis-benchmark $(bench_args "$port" "$N" "$test") | tail -n +2 | tr -d '"')
      after=$(cpu_ticks "$server_pid")
      cpu=$(awk -v a="$after" -v b="$before" -v hz="$hz" -v n="$N" 'BEGIN{printf "%.3f", (a-b)*1e6/hz/n}')
      echo "$round,$target,$result,$cpu" | tee -a "$OUT/results.csv"
    done
    redis-cli -p "$port" INFO keyspace | grep db0 >>"$OUT/$target.log" || true
    stop_server
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/environment.txt"

# Medians per target/test and the kv4j/redis ratios.
python3 - "$OUT/results.csv" >"$OUT/summary.md" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
med = {}
for t in sorted({(r['target'], r['test']) for r in rows}):
    rs = [r for r in rows if (r['target'], r['test']) == t]
    med[t] = {k: statistics.median(float(r[k]) for r in rs)
              for k in ('rps', 'p50_ms', 'p99_ms', 'server_cpu_us_per_req')}
print('| target | test | rps (median) | p50 ms | p99 ms | server CPU us/req | rps / redis | p99 / redis |')
print('|---|---|---:|---:|---:|---:|---:|---:|')
for (target, test), m in sorted(med.items()):
    base = med.get(('redis-always' if target.endswith('-sync') else 'redis', test))
    ratio = f"{m['rps'] / base['rps']:.2f}x" if base else '-'
    p99r = f"{m['p99_ms'] / base['p99_ms']:.2f}x" if base and base['p99_ms'] else '-'
    print(f"| {target} | {test} | {m['rps']:,.0f} | {m['p50_ms']:.3f} | {m['p99_ms']:.3f} "
          f"| {m['server_cpu_us_per_req']:.2f} | {ratio} | {p99r} |")
PY
cat "$OUT/summary.md"
echo "results in $OUT"
