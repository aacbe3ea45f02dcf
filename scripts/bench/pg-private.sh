#!/usr/bin/env bash
# A private PostgreSQL cluster for measuring the store (docs/performance.md, session 7): the shared server's settings
# (autovacuum off, 128 MB of shared buffers), pg_stat_statements preloaded, and no checkpoint within a day, so a run's
# WAL is deterministic to the byte and no one else's work lands in it. Needs the server's binaries (Debian's
# postgresql-15) and root, as the cluster runs as the `postgres` user.
#   scripts/bench/pg-private.sh start [port, default 47300] [dir, default /tmp/sokoni-pg-<port>]
#   scripts/bench/pg-private.sh stop  [port] [dir]
# Then, e.g.: SOKONI_PG_SERVER=1 node scripts/bench/pg-roundtrips.ts 300 postgres://postgres@127.0.0.1:<port>/postgres
set -euo pipefail
action=${1:-start}
port=${2:-47300}
dir=${3:-/tmp/sokoni-pg-$port}
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
as_postgres() { su postgres -c "$*"; }
case "$action" in
  start)
    if [ ! -f "$dir/data/PG_VERSION" ]; then
      mkdir -p "$dir" && chown postgres "$dir"
      as_postgres "$bin/initdb -D $dir/data -A trust -U postgres --locale=C.UTF-8 -E UTF8" >"$dir/initdb.log"
      cat >>"$dir/data/postgresql.conf" <<EOF
port = $port
listen_addresses = '127.0.0.1'
unix_socket_directories = '$dir'
autovacuum = off
shared_buffers = 128MB
max_wal_size = 4GB
checkpoint_timeout = 1d
shared_preload_libraries = 'pg_stat_statements'
pg_stat_statements.track = all
TimeZone = 'Etc/UTC'
EOF
    fi
    as_postgres "$bin/pg_ctl -D $dir/data -l $dir/log -w start"
    ;;
  stop) as_postgres "$bin/pg_ctl -D $dir/data -w stop -m fast" ;;
  *) echo "usage: $0 start|stop [port] [dir]" >&2; exit 2 ;;
esac
