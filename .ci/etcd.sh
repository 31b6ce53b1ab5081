#!/usr/bin/env bash
# Installs (Debian's etcd-server, etcd-client) and starts, on loopback only, the three-member etcd
# cluster the etcd engine's tests use:
#   member m1  client http://127.0.0.1:2379   peer http://127.0.0.1:2380
#   member m2  client http://127.0.0.1:22379  peer http://127.0.0.1:22380
#   member m3  client http://127.0.0.1:32379  peer http://127.0.0.1:32380
# Data under /var/tmp/kv4j-etcd/<member> (logs and pid files beside). Limits raised from etcd's
# defaults (128 ops per txn, 1.5 MiB per request) to 10000 ops and 9 MiB (the largest safe figure;
# see MAX_REQUEST_BYTES for why not more); the engine's options max-txn-ops and max-request-bytes
# must not exceed what the cluster runs with (the tests pass these figures). History is compacted every 10 minutes
# (periodic auto-compaction) so the test runs stay far from the 4 GiB backend quota set here.
# Idempotent: running it again leaves running members alone and only starts what is down. No TLS,
# no auth: a loopback test cluster.
#
# Usage: etcd.sh               install (if needed), start every member, wait until the cluster is healthy
#        etcd.sh stop N        kill -9 member N (1-3); the engine's member-loss tests call this
#        etcd.sh start N       start member N again and wait until it answers
#        etcd.sh health        exit 0 when every member is healthy
#        etcd.sh reset         kill every member, delete the data, start a new empty cluster
set -euo pipefail

BASE=${KV4J_ETCD_DIR:-/var/tmp/kv4j-etcd}
CLIENT_PORTS=(2379 22379 32379)
PEER_PORTS=(2380 22380 32380)
MAX_TXN_OPS=10000
# Not above ~10 MiB: etcd 3.4 refuses to read back a WAL entry over 10 MiB (wal: max entry size
# limit exceeded), so a member that logged a larger request can never restart. Seen here with 16 MiB
# values: every member that had them failed to start after a kill.
MAX_REQUEST_BYTES=$((9 << 20))

log() { echo "etcd.sh: $*" >&2; }

# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

install_packages() {
  local missing=()
  command -v etcd >/dev/null 2>&1 || missing+=(etcd-server)
  command -v etcdctl >/dev/null 2>&1 || missing+=(etcd-client)
  if ((${#missing[@]})); then
    log "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${missing[@]}" >/dev/null
    if [[ " ${missing[*]} " == *" etcd-server "* ]]; then
      # Where an init system runs, the package starts its own etcd on 127.0.0.1:2379/2380, the
      # ports of member m1: stop and disable the service this script just installed.
      (systemctl disable --now etcd || service etcd stop || true) >/dev/null 2>&1
    fi
  fi
}

initial_cluster() {
  local i out=()
  for i in 0 1 2; do out+=("m$((i + 1))=http://127.0.0.1:${PEER_PORTS[$i]}"); done
  (IFS=,; echo "${out[*]}")
}

endpoint() { echo "http://127.0.0.1:${CLIENT_PORTS[$(($1 - 1))]}"; }

all_endpoints() { echo "$(endpoint 1),$(endpoint 2),$(endpoint 3)"; }

member_pid() { # prints the pid of member N if it runs
  local f=$BASE/m$1.pid
  [ -f "$f" ] || return 1
  local pid
  pid=$(cat "$f")
  kill -0 "$pid" 2>/dev/null && grep -q etcd "/proc/$pid/cmdline" 2>/dev/null && echo "$pid"
}

member_up() { ETCDCTL_API=3 etcdctl --endpoints="$(endpoint "$1")" --command-timeout=2s endpoint health; }

start_member() { # N
  local n=$1 i=$(($1 - 1))
  if member_pid "$n" >/dev/null; then
    return 0
  fi
  mkdir -p "$BASE"
  local state=new
  [ -d "$BASE/m$n/member" ] && state=existing
  log "starting etcd member m$n (client ${CLIENT_PORTS[$i]}, peer ${PEER_PORTS[$i]}, $state)"
  setsid etcd \
    --name "m$n" \
    --data-dir "$BASE/m$n" \
    --listen-client-urls "http://127.0.0.1:${CLIENT_PORTS[$i]}" \
    --advertise-client-urls "http://127.0.0.1:${CLIENT_PORTS[$i]}" \
    --listen-peer-urls "http://127.0.0.1:${PEER_PORTS[$i]}" \
    --initial-advertise-peer-urls "http://127.0.0.1:${PEER_PORTS[$i]}" \
    --initial-cluster "$(initial_cluster)" \
    --initial-cluster-token kv4j-etcd \
    --initial-cluster-state "$state" \
    --max-txn-ops "$MAX_TXN_OPS" \
    --max-request-bytes "$MAX_REQUEST_BYTES" \
    --quota-backend-bytes $((4 << 30)) \
    --auto-compaction-mode periodic --auto-compaction-retention 10m \
    --logger zap --log-outputs "$BASE/m$n.log" \
    </dev/null >>"$BASE/m$n.out" 2>&1 &
  echo $! >"$BASE/m$n.pid"
}

stop_member() { # N
  local pid
  if pid=$(member_pid "$1"); then
    log "killing etcd member m$1 (pid $pid)"
    kill -9 "$pid"
    wait_until 30 "member m$1 to stop" bash -c "! kill -0 $pid"
  fi
  rm -f "$BASE/m$1.pid"
}

cluster_healthy() {
  ETCDCTL_API=3 etcdctl --endpoints="$(all_endpoints)" --command-timeout=2s endpoint health
}

case "${1:-start}" in
  start)
    if [ -n "${2:-}" ]; then
      start_member "$2"
      wait_until 60 "member m$2" member_up "$2"
      exit 0
    fi
    install_packages
    for n in 1 2 3; do start_member "$n"; done
    wait_until 90 "etcd cluster healthy" cluster_healthy
    log "etcd cluster ready on $(all_endpoints)"
    ;;
  stop)
    [[ "${2:-}" =~ ^[123]$ ]] || { log "usage: etcd.sh stop 1|2|3"; exit 2; }
    stop_member "$2"
    ;;
  health) cluster_healthy ;;
  reset)
    for n in 1 2 3; do stop_member "$n"; done
    # Only this script's own directory; refuse anything that does not look like it.
    case "$BASE" in /tmp/*|/var/tmp/*) rm -rf "$BASE" ;; *) log "refusing to delete $BASE"; exit 2 ;; esac
    exec bash "${BASH_SOURCE[0]}" start
    ;;
  *)
    log "usage: etcd.sh [start [N] | stop N | health | reset]"
    exit 2
    ;;
esac
