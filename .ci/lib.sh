# Shared by servers.sh and etcd.sh (sourced, after each defines its own log()).

wait_until() { # wait_until SECONDS DESCRIPTION COMMAND...
  local deadline=$((SECONDS + $1)) what=$2
  shift 2
  until "$@" >/dev/null 2>&1; do
    if ((SECONDS >= deadline)); then
      log "timed out waiting for $what"
      return 1
    fi
    sleep 0.5
  done
}
