/**
 * The floor under the PostgreSQL figures (`npm run bench -- --only floor`): what a round trip and a commit cost on this
 * machine, whatever the engine does above them. Each row is pg-floor-child.ts pinned to the server core against a
 * fresh database: once with the server's own `synchronous_commit` (a commit waits for its WAL to reach the disk), once
 * with `synchronous_commit = off` set on that database (a commit returns before the flush; PostgreSQL may lose the
 * last few hundred ms of commits if it crashes, never a half-written one).
 *
 * Why it is in the bench: one partner's writes run one at a time under its partition's lock (E-320), and a lock is
 * held until its COMMIT returns, so every round trip inside a write transaction is time no other write of that
 * partner can use: a round trip's wall time times the round trips of a quote->trade pair bounds one partner's pairs/s,
 * whatever the engine's CPU (docs/performance.md counts the round trips).
 */
import { execFileSync } from "node:child_process"
import { runChild } from "./load.ts"
import type { FloorResult, FloorSpec } from "./pg-floor-child.ts"
import { table } from "./report.ts"
import { freshDatabase, SERVER_CORE } from "./targets.ts"

export interface FloorRow {
  readonly commit: "synchronous" | "asynchronous"
  readonly result: FloorResult
}

const PG = ["-h", "127.0.0.1", "-U", "postgres"]

const databaseName = (url: string) => new URL(url).pathname.slice(1)

export const measureFloor = async (runs: number, log: (line: string) => void): Promise<FloorRow[]> => {
  const rows: FloorRow[] = []
  for (const commit of ["synchronous", "asynchronous"] as const) {
    const databaseUrl = await freshDatabase()
    if (commit === "asynchronous")
      execFileSync("psql", [...PG, "-d", databaseName(databaseUrl), "-qc", `ALTER DATABASE "${databaseName(databaseUrl)}" SET synchronous_commit = off`])
    const spec: FloorSpec = { databaseUrl, runs }
    const result = await runChild<FloorResult>("scripts/bench/pg-floor-child.ts", spec, "pg floor", { core: SERVER_CORE })
    log(
      `  [floor] ${commit} commit: raw SELECT ${result.rawSelect.cpuMicros.toFixed(0)} µs CPU / ${result.rawSelect.wallMicros.toFixed(0)} µs wall; store write transaction ${result.storeWrite.cpuMicros.toFixed(0)} µs CPU / ${result.storeWrite.wallMicros.toFixed(0)} µs wall`
    )
    rows.push({ commit, result })
  }
  return rows
}

const micros = (value: number) => value.toFixed(0)

/** One-row write transactions one partner can commit per second, one after another. */
export const serialWritesPerSecond = (row: FloorRow): number => 1_000_000 / row.result.storeWrite.wallMicros

export const floorTable = (rows: readonly FloorRow[]): string =>
  table(
    [
      "commit",
      "raw SELECT by key: CPU / wall µs",
      "store read of one document: CPU / wall µs",
      "store write transaction: CPU / wall µs",
      "one partner's one-row writes/s, serial"
    ],
    rows.map((row) => [
      row.commit === "synchronous" ? "synchronous (the server's setting)" : "synchronous_commit = off",
      `${micros(row.result.rawSelect.cpuMicros)} / ${micros(row.result.rawSelect.wallMicros)}`,
      `${micros(row.result.storeRead.cpuMicros)} / ${micros(row.result.storeRead.wallMicros)}`,
      `${micros(row.result.storeWrite.cpuMicros)} / ${micros(row.result.storeWrite.wallMicros)}`,
      micros(serialWritesPerSecond(row))
    ])
  )
