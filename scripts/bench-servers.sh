# Sourced by scripts/bench and scripts/profile-cycle: starts and stops one
# server under test at a time, tarde or a peer, each in a fresh data directory
# under $out/data with its log in $out/logs. Needs $repo, $out, $pg_bin and a
# say function; tarde is $tarde_bin, or the one in ${build_dir:-build}/bin.
server_pid=""
server_port=""
server_data=""
stop_server() {
  local signal=${1:-TERM}
  [ -n "$server_pid" ] || return 0
  local children=""
  # A kill -9 of PostgreSQL's postmaster leaves its backends to die on their
  # own; kill them too (they are this server's children, found by parent pid).
  [ "$signal" = KILL ] && children=$(pgrep -P "$server_pid" || true)
  kill -"$signal" "$server_pid" $children 2>/dev/null || true
  for _ in $(seq 100); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$server_pid" 2>/dev/null || true
  wait "$server_pid" 2>/dev/null || true
  server_pid=""
}

# PostgreSQL's cluster is created once and copied for every start.
pg_template=""
pg_template() {
  [ -n "$pg_template" ] && return 0
  pg_template="$out/data/pg-template"
  mkdir -p "$pg_template" && chown postgres "$pg_template"
  setpriv --reuid=postgres --regid=postgres --init-groups -- \
    "$pg_bin/initdb" -D "$pg_template" --auth=trust -U postgres -E UTF8 --no-locale \
    >"$out/logs/initdb.log" 2>&1
}

wait_port() {
  for _ in $(seq 600); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
    kill -0 "$server_pid" 2>/dev/null || return 1
    sleep 0.05
  done
  return 1
}

# start_server LABEL [keep]: starts a fresh server (or, with keep, restarts
# on the same data directory) and sets server_pid, server_port, server_data.
start_server() {
  local label=$1 keep=${2:-}
  server_port=${BENCH_PORT:-17411}
  if [ -z "$keep" ]; then
    server_data="$out/data/$label-$RANDOM"
    rm -rf "$server_data"
    if [ "$label" = postgres ]; then
      pg_template
      cp -a "$pg_template" "$server_data"
    else
      mkdir -p "$server_data"
    fi
  fi
  local log="$out/logs/$label.log"
  case "$label" in
    tarde)
      "${tarde_bin:-$repo/${build_dir:-build}/bin/tarde}" serve --listen "127.0.0.1:$server_port" --data "$server_data" \
        --sync always --log-level warn ${TARDE_SERVE_FLAGS:-} >>"$log" 2>&1 & ;;
    beanstalkd-f0)
      beanstalkd -l 127.0.0.1 -p "$server_port" -b "$server_data" -f0 >>"$log" 2>&1 & ;;
    beanstalkd-nofsync)
      beanstalkd -l 127.0.0.1 -p "$server_port" -b "$server_data" -F >>"$log" 2>&1 & ;;
    redis-always|redis-everysec)
      redis-server --bind 127.0.0.1 --port "$server_port" --dir "$server_data" \
        --appendonly yes --appendfsync "${label#redis-}" --save "" --daemonize no \
        --protected-mode no --loglevel warning >>"$log" 2>&1 & ;;
    postgres)
      setpriv --reuid=postgres --regid=postgres --init-groups -- \
        "$pg_bin/postgres" -D "$server_data" -p "$server_port" -c listen_addresses=127.0.0.1 \
        -c unix_socket_directories="$server_data" -c synchronous_commit=on -c fsync=on \
        -c max_connections=300 >>"$log" 2>&1 & ;;
    *) echo "bench: unknown system $label" >&2; exit 2 ;;
  esac
  server_pid=$!
  # A restart is timed by tarde-bench itself, which retries until it gets
  # an answer: waiting here would add the polling interval to the figure.
  [ -n "$keep" ] && return 0
  if ! wait_port "$server_port"; then
    say "FAILED: $label did not start (see $log)"
    return 1
  fi
  if [ "$label" = postgres ]; then
    for _ in $(seq 600); do
      "$pg_bin/pg_isready" -q -h 127.0.0.1 -p "$server_port" && break
      sleep 0.05
    done
  fi
}

# system_of LABEL: the tarde-bench --system that drives a server label.
system_of() { case "$1" in beanstalkd-*) echo beanstalkd ;; redis-*) echo redis ;; *) echo "$1" ;; esac; }
