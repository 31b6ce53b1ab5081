#!/usr/bin/env bash
# usage: prio.sh MODE [tests]; MODE none|nice19|idle ; applies to hashlog background threads
MODE=$1; TESTS=${2:-"set get mset incr"}; PORT=6493; JAR=${JAR:-/work/main/server/target/kv4j-server.jar}
rm -rf /tmp/prof/hl
taskset -c 0 java -Xms2g -Xmx2g -XX:+UseParallelGC -XX:+AlwaysPreTouch ${XOPTS:-} -jar $JAR --port $PORT --threads 1 "${URI:-hashlog:/tmp/prof/hl?durability=buffered}" > /tmp/prof/s.log 2>&1 & SP=$!
for i in $(seq 1 100); do redis-cli -p $PORT PING >/dev/null 2>&1 && break; sleep 0.2; done
for t in /proc/$SP/task/*; do
  c=$(cat $t/comm); tid=$(basename $t)
  case "$c" in kv4j-hashlog-*) case $MODE in nice19) renice -n 19 -p $tid >/dev/null;; idle) chrt --idle -p 0 $tid;; esac;; esac
done
for w in 1 2; do for t in $TESTS; do taskset -c 1 redis-benchmark -p $PORT -t $t -n 300000 -r 1000000 -d 100 -c 50 -P ${P:-16} -q >/dev/null; done; redis-cli -p $PORT flushall >/dev/null; done
echo "MARK t=$(( $(cut -d" " -f1 /proc/uptime | tr -d .)0 ))" >&2; for t in $TESTS; do [ -n "$JFR" ] && jcmd $SP JFR.start name=m settings=/tmp/prof/my.jfc filename=/tmp/prof/m-$t.jfr >/dev/null; printf "$MODE "; taskset -c 1 redis-benchmark -p $PORT -t $t -n ${N:-1000000} -r 1000000 -d 100 -c 50 -P ${P:-16} --csv | tail -1 | cut -d, -f1,2,5,6,7,8; [ -n "$JFR" ] && jcmd $SP JFR.stop name=m >/dev/null; done
redis-cli -p $PORT info 2>/dev/null | grep -E "throttl|compaction-runs|amplification|compaction-bytes" >&2
kill $SP; wait $SP 2>/dev/null
