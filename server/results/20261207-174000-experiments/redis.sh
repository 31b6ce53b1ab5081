#!/usr/bin/env bash
TESTS=${TESTS:-"set get mset incr"}; PORT=6494
taskset -c 0 redis-server --port $PORT --save "" --appendonly no --daemonize no >/tmp/prof/r.log 2>&1 & SP=$!
for i in $(seq 1 100); do redis-cli -p $PORT PING >/dev/null 2>&1 && break; sleep 0.2; done
for w in 1 2; do for t in $TESTS; do taskset -c 1 redis-benchmark -p $PORT -t $t -n 300000 -r 1000000 -d 100 -c 50 -P ${P:-16} -q >/dev/null; done; redis-cli -p $PORT flushall >/dev/null; done
for t in $TESTS; do printf "redis "; taskset -c 1 redis-benchmark -p $PORT -t $t -n ${N:-1000000} -r 1000000 -d 100 -c 50 -P ${P:-16} --csv | tail -1 | cut -d, -f1,2,5,6,7,8; done
kill $SP; wait $SP 2>/dev/null
