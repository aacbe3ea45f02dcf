/**
 * What one PostgreSQL round trip and one commit cost on this machine, below the engine's request path (the `floor`
 * part of `npm run bench`, floor.ts): a raw `@effect/sql-pg` SELECT by key, the engine store's read of one document,
 * and the store's write transaction of one document (BEGIN, the partition's lock, the row, COMMIT). Run pinned to the
 * server core, against a database of its own. Prints one JSON line: a FloorResult.
 * Usage: node pg-floor-child.ts '{"databaseUrl": "...", "runs": 2000}'
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { PostgresClientLayer, PostgresStoreLayer } from "../../engine/store/postgres.ts"
import { Store } from "../../engine/store/port.ts"

export interface FloorSpec {
  readonly databaseUrl: string
  readonly runs: number
}

/** Per operation: µs of this process's CPU and µs of wall time, averaged over the runs. */
export interface Cost {
  readonly cpuMicros: number
  readonly wallMicros: number
}

export interface FloorResult {
  readonly rawSelect: Cost
  readonly storeRead: Cost
  readonly storeWrite: Cost
}

const spec = JSON.parse(process.argv[2]!) as FloorSpec
const WARMUP = 200
const PARTITION = "ptn_floor/sandbox"

/** Runs `work` WARMUP times, then `spec.runs` times measured. */
const measure = <E, R>(work: Effect.Effect<unknown, E, R>): Effect.Effect<Cost, E, R> =>
  Effect.gen(function* () {
    for (let i = 0; i < WARMUP; i++) yield* work
    const cpu = process.cpuUsage()
    const started = performance.now()
    for (let i = 0; i < spec.runs; i++) yield* work
    const used = process.cpuUsage(cpu)
    return { cpuMicros: (used.user + used.system) / spec.runs, wallMicros: ((performance.now() - started) * 1000) / spec.runs }
  })

const onStore = Effect.gen(function* () {
  const store = yield* Store
  let n = 0
  const put = Effect.suspend(() => store.transact((tx) => tx.put("floor", { id: "row", partition: PARTITION, sortKey: "row", body: { n: ++n } })))
  yield* put
  const storeRead = yield* measure(store.read((tx) => tx.get("floor", "row")))
  const storeWrite = yield* measure(put)
  return { storeRead, storeWrite }
})

const onDriver = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  return yield* measure(sql`SELECT id, partition, sort_key, body FROM documents WHERE collection = ${"floor"} AND id = ${"row"}`)
})

const { storeRead, storeWrite } = await Effect.runPromise(onStore.pipe(Effect.provide(PostgresStoreLayer(spec.databaseUrl))))
const rawSelect = await Effect.runPromise(onDriver.pipe(Effect.provide(PostgresClientLayer(spec.databaseUrl))))
const result: FloorResult = { rawSelect, storeRead, storeWrite }
console.log(JSON.stringify(result))
