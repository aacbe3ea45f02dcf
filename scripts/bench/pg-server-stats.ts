/**
 * What the PostgreSQL server spends on a phase of pg-roundtrips.ts (SOKONI_PG_SERVER=1): the WAL it wrote (the
 * cluster's insert position before and after: deterministic when nothing else writes to the cluster, so run it on a
 * private one), its processes' CPU (each backend's and background process's run time from /proc/<pid>/schedstat, in
 * ns: the server must be on this machine and readable), and, when the cluster loads pg_stat_statements, each
 * statement's calls, rows and WAL bytes (PL/pgSQL's statements too) and the tables' rows inserted, updated (HOT or
 * not) and deleted, read once the store's sessions have ended and reported them.
 */
import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"

const psqlRows = (url: string, query: string): Array<Array<string>> =>
  execFileSync("psql", [url, "-AtF", "\t", "-c", query])
    .toString()
    .trim()
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => line.split("\t"))

/** ns on a CPU so far of one process; 0 once it has gone. */
const runNanos = (pid: string): number => {
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, "utf8").split(" ")[0])
  } catch {
    return 0
  }
}

export interface ServerMark {
  readonly lsn: string
  readonly cpu: ReadonlyMap<string, number>
}

/** The server's processes: the database's backends and the cluster's background processes (not this psql's own). */
const serverPids = (url: string, database: string): Array<string> =>
  psqlRows(url, `SELECT pid FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND (datname = '${database}' OR backend_type <> 'client backend')`).map(
    (row) => row[0] as string
  )

export const markServer = (url: string, database: string): ServerMark => {
  const cpu = new Map(serverPids(url, database).map((pid) => [pid, runNanos(pid)]))
  const lsn = psqlRows(url, "SELECT pg_current_wal_insert_lsn()")[0]?.[0] as string
  return { lsn, cpu }
}

/** WAL bytes and server CPU µs since `mark`; a process started since counts from zero, one gone since is lost. */
export const sinceMark = (url: string, database: string, mark: ServerMark): { readonly walBytes: number; readonly cpuMicros: number } => {
  const lsn = psqlRows(url, "SELECT pg_current_wal_insert_lsn()")[0]?.[0] as string
  let nanos = 0
  for (const pid of serverPids(url, database)) nanos += runNanos(pid) - (mark.cpu.get(pid) ?? 0)
  const walBytes = Number(psqlRows(url, `SELECT pg_wal_lsn_diff('${lsn}', '${mark.lsn}')`)[0]?.[0])
  return { walBytes, cpuMicros: nanos / 1000 }
}

/** True when the database could load pg_stat_statements (the cluster preloads it); then it is reset. */
export const statementsOn = (url: string): boolean => {
  try {
    execFileSync("psql", [url, "-qc", "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"], { stdio: "pipe" })
    psqlRows(url, "SELECT pg_stat_statements_reset()")
    return true
  } catch {
    return false
  }
}

export const resetStatements = (url: string) => void psqlRows(url, "SELECT pg_stat_statements_reset()")

/** Per pair: each statement's calls, rows and WAL bytes, the top ones by WAL; then each table's row changes. */
export const printStatements = (url: string, pairs: number) => {
  const statements = psqlRows(
    url,
    `SELECT round(calls::numeric / ${pairs}, 2), round(rows::numeric / ${pairs}, 2), round(wal_bytes / ${pairs}), round(wal_fpi::numeric / ${pairs}, 2),
       round((total_exec_time * 1000 / ${pairs})::numeric), left(regexp_replace(query, '\\s+', ' ', 'g'), 110)
     FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND calls > 0
     ORDER BY wal_bytes DESC, calls DESC LIMIT 40`
  )
  console.log("per pair: calls rows wal-bytes wal-fpi exec-µs statement")
  for (const row of statements) console.log(row.join(" "))
}

/**
 * Each table's rows inserted, updated, HOT-updated and deleted since the database was made, per order written (one a
 * pair: a session reports its counts only when it is idle outside a transaction or ends, so the pairs counted are
 * those whose orders are counted).
 */
export const printTables = (url: string) => {
  const pairs = Number(psqlRows(url, "SELECT GREATEST(n_tup_ins, 1) FROM pg_stat_user_tables WHERE relname = 'orders'")[0]?.[0] ?? 1)
  const tables = psqlRows(
    url,
    `SELECT relname, round(n_tup_ins::numeric / ${pairs}, 2), round(n_tup_upd::numeric / ${pairs}, 2), round(n_tup_hot_upd::numeric / ${pairs}, 2),
       round(n_tup_del::numeric / ${pairs}, 2), pg_relation_size(relid), (SELECT count(*) FROM pg_index WHERE indrelid = relid)
     FROM pg_stat_user_tables WHERE n_tup_ins + n_tup_upd + n_tup_del > 0 ORDER BY relname`
  )
  console.log(`per order (${pairs} counted, setup and warm-up included): table ins upd hot-upd del | bytes indexes`)
  let total = 0
  for (const row of tables) {
    total += Number(row[1]) + Number(row[2]) + Number(row[4])
    console.log(row.join(" "))
  }
  console.log(`rows written per pair: ${total.toFixed(2)}`)
}
