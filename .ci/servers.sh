#!/usr/bin/env bash
# Installs and starts, on loopback only, the servers the server engines' tests use:
#   PostgreSQL 127.0.0.1:5432  user kv4j / password kv4j, database kv4j
#   MariaDB    127.0.0.1:3306  user kv4j / password kv4j, database kv4j
#   Redis      127.0.0.1:6379  standalone (AOF on, appendfsync always)
#   Redis      127.0.0.1:7000-7002  a three-primary Redis Cluster (AOF on, appendfsync always)
#   etcd       127.0.0.1:2379, 22379, 32379  a three-member cluster (Debian's etcd-server), started
#              by .ci/etcd.sh (which also stops and restarts single members for the engine's tests)
# Debian 12, run as root. Idempotent: running it again leaves running servers alone and only
# starts what is down. These defaults are the engines' and the tests' defaults.
#
# Usage: servers.sh                 install (if needed) and start everything, wait until each answers
#        servers.sh restart NAME    restart one server (postgres | mariadb | redis | redis-cluster);
#                                   the engines' reconnect tests call this
set -euo pipefail

PG_VERSION_GLOB=/usr/lib/postgresql/*/bin/postgres
REDIS_BASE=/var/lib/kv4j-redis
CLUSTER_PORTS=(7000 7001 7002)

log() { echo "servers.sh: $*" >&2; }

# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

install_packages() {
  local missing=()
  command -v pg_ctlcluster >/dev/null 2>&1 || missing+=(postgresql)
  command -v mariadbd >/dev/null 2>&1 || missing+=(mariadb-server)
  command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
  command -v redis-cli >/dev/null 2>&1 || missing+=(redis-tools)
  # The RESP server's TLS test makes its certificate with openssl (and talks redis-cli --tls).
  command -v openssl >/dev/null 2>&1 || missing+=(openssl)
  if ((${#missing[@]})); then
    log "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
}

# ---------------------------------------------------------------- PostgreSQL
pg_cluster() { # prints "VERSION NAME" of the first cluster, creating one when none exists
  local line
  line=$(pg_lsclusters -h 2>/dev/null | head -n 1 || true)
  if [ -z "$line" ]; then
    local v
    v=$(basename "$(dirname "$(dirname "$(ls -d $PG_VERSION_GLOB | sort -V | tail -n 1)")")")
    pg_createcluster "$v" main >/dev/null
    line=$(pg_lsclusters -h | head -n 1)
  fi
  echo "$line" | awk '{print $1, $2}'
}

start_postgres() {
  local v n
  read -r v n < <(pg_cluster)
  if ! pg_lsclusters -h | awk -v v="$v" -v n="$n" '$1==v && $2==n {print $4}' | grep -q online; then
    log "starting PostgreSQL $v/$n"
    pg_ctlcluster "$v" "$n" start
  fi
  wait_until 60 "PostgreSQL" runuser -u postgres -- psql -qAtc 'select 1'
  runuser -u postgres -- psql -qAt -v ON_ERROR_STOP=1 <<'SQL' >/dev/null
DO $$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'kv4j') THEN
    CREATE ROLE kv4j LOGIN PASSWORD 'kv4j';
  END IF;
END $$;
SQL
  if ! runuser -u postgres -- psql -qAtc "select 1 from pg_database where datname='kv4j'" | grep -q 1; then
    runuser -u postgres -- createdb -O kv4j kv4j
  fi
  wait_until 30 "PostgreSQL login as kv4j" \
    env PGPASSWORD=kv4j psql -h 127.0.0.1 -p 5432 -U kv4j -d kv4j -qAtc 'select 1'
  log "PostgreSQL ready on 127.0.0.1:5432 (kv4j/kv4j, database kv4j)"
}

restart_postgres() {
  local v n
  read -r v n < <(pg_cluster)
  pg_ctlcluster "$v" "$n" restart -m fast
  wait_until 60 "PostgreSQL" env PGPASSWORD=kv4j psql -h 127.0.0.1 -U kv4j -d kv4j -qAtc 'select 1'
}

# ---------------------------------------------------------------- MariaDB
mariadb_up() { mariadb-admin --protocol=socket -uroot ping 2>/dev/null | grep -q alive; }

start_mariadb() {
  # 16 MiB values need a larger packet than the 16 MiB default; loopback only.
  cat >/etc/mysql/mariadb.conf.d/90-kv4j.cnf <<'EOF'
[mysqld]
bind-address = 127.0.0.1
max_allowed_packet = 256M
innodb_flush_log_at_trx_commit = 1
max_connections = 300
EOF
  if ! mariadb_up; then
    log "starting MariaDB"
    mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld
    if [ ! -d /var/lib/mysql/mysql ]; then
      mariadb-install-db --user=mysql --datadir=/var/lib/mysql >/dev/null
    fi
    # Not through the init system: containers often have none, and policy-rc.d may deny it.
    (setsid mariadbd-safe --user=mysql >/dev/null 2>&1 &)
  fi
  wait_until 60 "MariaDB" mariadb_up
  mariadb --protocol=socket -uroot <<'SQL'
CREATE DATABASE IF NOT EXISTS kv4j;
CREATE USER IF NOT EXISTS 'kv4j'@'127.0.0.1' IDENTIFIED BY 'kv4j';
CREATE USER IF NOT EXISTS 'kv4j'@'localhost' IDENTIFIED BY 'kv4j';
GRANT ALL PRIVILEGES ON kv4j.* TO 'kv4j'@'127.0.0.1';
GRANT ALL PRIVILEGES ON kv4j.* TO 'kv4j'@'localhost';
GRANT RELOAD ON *.* TO 'kv4j'@'127.0.0.1';
GRANT RELOAD ON *.* TO 'kv4j'@'localhost';
FLUSH PRIVILEGES;
SQL
  wait_until 30 "MariaDB login as kv4j" mariadb -h 127.0.0.1 -P 3306 -ukv4j -pkv4j kv4j -e 'select 1'
  log "MariaDB ready on 127.0.0.1:3306 (kv4j/kv4j, database kv4j)"
}

restart_mariadb() {
  mariadb-admin --protocol=socket -uroot shutdown || true
  wait_until 60 "MariaDB to stop" bash -c '! pgrep -x mariadbd'
  start_mariadb
}

# ---------------------------------------------------------------- Redis
redis_up() { redis-cli -h 127.0.0.1 -p "$1" ping 2>/dev/null | grep -q PONG; }

start_redis_instance() { # PORT CLUSTER(yes|no)
  local port=$1 cluster=$2 dir=$REDIS_BASE/$1
  mkdir -p "$dir"
  cat >"$dir/redis.conf" <<EOF
bind 127.0.0.1
port $port
protected-mode yes
daemonize yes
pidfile $dir/redis.pid
logfile $dir/redis.log
dir $dir
appendonly yes
appendfsync always
save ""
cluster-enabled $cluster
cluster-config-file $dir/nodes.conf
cluster-node-timeout 5000
EOF
  chown -R redis:redis "$dir"
  if ! redis_up "$port"; then
    log "starting redis-server on $port (cluster-enabled $cluster)"
    runuser -u redis -- redis-server "$dir/redis.conf"
  fi
  wait_until 30 "redis-server on $port" redis_up "$port"
}

start_redis() {
  start_redis_instance 6379 no
  log "Redis standalone ready on 127.0.0.1:6379"
}

cluster_ok() {
  redis-cli -h 127.0.0.1 -p "${CLUSTER_PORTS[0]}" cluster info 2>/dev/null | grep -q 'cluster_state:ok'
}

cluster_consistent() { # every node agrees on every slot's owner, none open, all covered
  redis-cli --cluster check "127.0.0.1:${CLUSTER_PORTS[0]}" >/dev/null 2>&1
}

cluster_ready() { cluster_ok && cluster_consistent; }

start_redis_cluster() {
  local p nodes=()
  for p in "${CLUSTER_PORTS[@]}"; do
    start_redis_instance "$p" yes
    nodes+=("127.0.0.1:$p")
  done
  local known
  known=$(redis-cli -h 127.0.0.1 -p "${CLUSTER_PORTS[0]}" cluster info | awk -F: '/cluster_known_nodes/ {print $2}' | tr -d '\r')
  if [ "$known" = "${#CLUSTER_PORTS[@]}" ] && ! cluster_consistent; then
    # A cluster left behind by an earlier run whose nodes disagree on a slot's owner (Redis 7.0 can
    # keep such a view for good after a slot moves back and forth) would fail the tests for no
    # fault of theirs: the cluster holds test data only, so it is made anew.
    log "Redis Cluster nodes disagree (redis-cli --cluster check); resetting it"
    for p in "${CLUSTER_PORTS[@]}"; do
      redis-cli -h 127.0.0.1 -p "$p" flushall >/dev/null
      redis-cli -h 127.0.0.1 -p "$p" cluster reset hard >/dev/null
    done
    known=1
  fi
  if [ "$known" != "${#CLUSTER_PORTS[@]}" ]; then
    log "creating Redis Cluster ${nodes[*]}"
    redis-cli --cluster create "${nodes[@]}" --cluster-replicas 0 --cluster-yes >/dev/null
  fi
  wait_until 60 "Redis Cluster state ok, every node agreeing" cluster_ready
  log "Redis Cluster ready on ${nodes[*]}"
}

restart_redis_instance() { # PORT
  local port=$1 dir=$REDIS_BASE/$1
  redis-cli -h 127.0.0.1 -p "$port" shutdown >/dev/null 2>&1 || true
  wait_until 30 "redis-server on $port to stop" bash -c "! redis-cli -h 127.0.0.1 -p $port ping"
  runuser -u redis -- redis-server "$dir/redis.conf"
  wait_until 30 "redis-server on $port" redis_up "$port"
}

case "${1:-start}" in
  start)
    install_packages
    start_postgres
    start_mariadb
    start_redis
    start_redis_cluster
    # Installs etcd-server/etcd-client if missing; idempotent (running members are left alone).
    bash "$(dirname "${BASH_SOURCE[0]}")/etcd.sh" start
    ;;
  restart)
    case "${2:-}" in
      postgres) restart_postgres ;;
      mariadb) restart_mariadb ;;
      redis) restart_redis_instance 6379 ;;
      redis-cluster)
        for p in "${CLUSTER_PORTS[@]}"; do restart_redis_instance "$p"; done
        wait_until 60 "Redis Cluster state ok" cluster_ok
        ;;
      *)
        log "usage: servers.sh restart postgres|mariadb|redis|redis-cluster"
        exit 2
        ;;
    esac
    ;;
  *)
    log "usage: servers.sh [start | restart postgres|mariadb|redis|redis-cluster]"
    exit 2
    ;;
esac
