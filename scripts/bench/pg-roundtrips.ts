/**
 * Round trips and CPU of quote->trade on the PostgreSQL store, without sockets on the HTTP side: the engine host's
 * `handle` called directly, its store connected through a TCP proxy that counts what the driver asks the server
 * (a Sync or a simple Query sent while nothing before it awaits an answer is one round trip: pg-wire-count.ts). Used to
 * judge the adapter's write path (docs/performance.md).
 *   node scripts/bench/pg-roundtrips.ts [pairs, default 300] [admin URL, default $DATABASE_URL or local]
 * With SOKONI_PG_FUNCTIONS=1 the database tracks its PL/pgSQL functions (`track_functions = pl`) and the run ends with
 * the server's time per call of each, warm-up included (the store's sessions report it when they end). With
 * SOKONI_PG_SERVER=1 it ends with the server's WAL bytes and CPU per pair of the measured pairs, and (when the cluster
 * preloads pg_stat_statements) each statement's calls, rows and WAL per pair and each table's row changes
 * (pg-server-stats.ts; sequential pairs only).
 */
import { createConnection, createServer, type Socket } from "node:net"
import { makeEngineHost } from "../../engine/http/engine-host.ts"
import { benchHostConfig, benchPartner, callerOf, json, SANDBOX } from "./in-process.ts"
import { databaseUrlFor } from "../../engine/store/pg-temp-db.ts"
import { wireCount } from "./pg-wire-count.ts"
import { execFileSync } from "node:child_process"
import { markServer, printStatements, printTables, resetStatements, sinceMark, statementsOn } from "./pg-server-stats.ts"

const PAIRS = Number(process.argv[2] ?? 300)
const ADMIN_URL = process.argv[3] ?? process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"
const WARMUP = 100

/** With SOKONI_PG_TRACE=1 the statements of the last pair are printed (Parse texts by statement name, Bind, Query). */
const TRACE = process.env.SOKONI_PG_TRACE === "1"
const statements = new Map<string, string>()
let traced: Array<string> = []
const cstring = (body: Buffer, at: number) => {
  const end = body.indexOf(0, at)
  return [body.toString("utf8", at, end), end + 1] as const
}
const traceMessage = (type: string, body: Buffer) => {
  if (type === "P") {
    const [name, at] = cstring(body, 0)
    statements.set(name, cstring(body, at)[0])
  } else if (type === "B") {
    const [, at] = cstring(body, 0)
    const [name, after] = cstring(body, at)
    // The parameters, when sent as text: enough to tell which row a read wants.
    const formats = body.readInt16BE(after)
    let at2 = after + 2 + formats * 2
    const count = body.readInt16BE(at2)
    at2 += 2
    const values: Array<string> = []
    for (let i = 0; i < count; i++) {
      const length = body.readInt32BE(at2)
      at2 += 4
      values.push(length < 0 ? "NULL" : body.toString("utf8", at2, at2 + Math.min(length, 40)))
      if (length > 0) at2 += length
    }
    traced.push(`${statements.get(name)?.replace(/\s+/g, " ").slice(0, 90) ?? "?"} [${values.join(", ")}]`)
  } else if (type === "Q") traced.push(`Q ${cstring(body, 0)[0].replace(/\s+/g, " ").slice(0, 160)}`)
}
/** Client -> server messages by type, after the startup packet (which has no type byte); round trips (pg-wire-count.ts). */
const counts = new Map<string, number>()
let roundTrips = 0
const counting = (client: Socket) => {
  const upstream = new URL(ADMIN_URL)
  const server = createConnection({ host: upstream.hostname, port: Number(upstream.port || 5432) })
  // No Nagle delay of the proxy's own: statements sent together (E-521) must not wait for an acknowledgement here.
  client.setNoDelay(true)
  server.setNoDelay(true)
  const count = wireCount(() => void roundTrips++)
  const each = (type: string, body: Buffer) => {
    counts.set(type, (counts.get(type) ?? 0) + 1)
    if (TRACE) traceMessage(type, body)
  }
  client.on("data", (chunk) => {
    count.client(chunk, each)
    server.write(chunk)
  })
  server.on("data", (chunk) => {
    count.server(chunk)
    client.write(chunk)
  })
  client.on("close", () => server.destroy())
  server.on("close", () => client.destroy())
  client.on("error", () => server.destroy())
  server.on("error", () => client.destroy())
}
const proxy = createServer(counting)
await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve))
const port = (proxy.address() as { port: number }).port

const database = `${process.env.SOKONI_DB_PREFIX ?? "sokoni_rt_"}${process.pid}`
const psql = (statement: string) => execFileSync("psql", [ADMIN_URL, "-qc", statement])
psql(`CREATE DATABASE ${database}`)
const FUNCTIONS = process.env.SOKONI_PG_FUNCTIONS === "1"
if (FUNCTIONS) psql(`ALTER DATABASE ${database} SET track_functions = 'pl'`)
const SERVER = process.env.SOKONI_PG_SERVER === "1"
const databaseUrl = databaseUrlFor(ADMIN_URL, database)
const statementsTracked = SERVER && statementsOn(databaseUrl)
const url = new URL(databaseUrlFor(ADMIN_URL, database))
// SOKONI_PG_DIRECT=1: no proxy (no counts), for a CPU profile of the engine alone.
if (process.env.SOKONI_PG_DIRECT !== "1") url.port = String(port)

const host = await makeEngineHost(benchHostConfig({ store: "postgres", databaseUrl: url.toString() }))

const call = callerOf(host)
const { key, symbol } = await benchPartner(call)

const trips = () => roundTrips
const cpuSince = (start: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(start)
  return used.user + used.system
}

const pairs = async (count: number, tag: string) => {
  const totals = { quoteMicros: 0, tradeMicros: 0, quoteTrips: 0, tradeTrips: 0, wallMs: 0, accepted: 0 }
  const started = performance.now()
  for (let i = 0; i < count; i++) {
    traced = []
    let before = trips()
    let cpu = process.cpuUsage()
    const quote = await call("GET", `${SANDBOX}/quote/${symbol}?side=BUY&quantity=1`, key)
    totals.quoteMicros += cpuSince(cpu)
    totals.quoteTrips += trips() - before
    const body = { symbol, type: "BUY", quantity: 1, quoteId: json(quote).quoteId }
    before = trips()
    cpu = process.cpuUsage()
    const trade = await call("POST", `${SANDBOX}/trade`, { ...key, "idempotency-key": `rt-${tag}-${String(i).padStart(8, "0")}` }, body)
    totals.tradeMicros += cpuSince(cpu)
    totals.tradeTrips += trips() - before
    if (trade.status === 202) accepted(totals)
    else if (i === 0) console.log("trade answered", trade.status, json(trade))
  }
  totals.wallMs = performance.now() - started
  return totals
}
/** Server time per call of each tracked function (ms), and per pair; read once the store's sessions have ended. */
function printFunctions(pairs: number) {
  const query = `SELECT funcname, calls, round((self_time / calls)::numeric, 4), round((total_time / calls)::numeric, 4),
    round((total_time / ${pairs})::numeric, 4) FROM pg_stat_user_functions WHERE calls > 0 ORDER BY total_time DESC`
  const url = databaseUrlFor(ADMIN_URL, database)
  // A session reports its counts when it ends; the store's have just been closed.
  for (let tries = 0; tries < 50; tries++) {
    const out = execFileSync("psql", [url, "-AtF", " ", "-c", query]).toString().trim()
    if (out.includes("sokoni_apply")) {
      console.log(`function calls self-ms/call total-ms/call total-ms/pair\n${out}`)
      return
    }
    execFileSync("sleep", ["0.2"])
  }
  console.log("no function statistics reported")
}
const accepted = (t: { accepted: number }) => void t.accepted++

/** SOKONI_PG_CONCURRENCY=n: n loops at once (one partner), as the bench's connections; totals are summed. */
const LOOPS = Number(process.env.SOKONI_PG_CONCURRENCY ?? 1)
const inLoops = async (count: number, tag: string) => {
  const started = performance.now()
  const cpu = process.cpuUsage()
  const before = trips()
  const all = await Promise.all(Array.from({ length: LOOPS }, (_, i) => pairs(Math.ceil(count / LOOPS), `${tag}-${i}`)))
  const accepted = all.reduce((sum, loop) => sum + loop.accepted, 0)
  return { accepted, wallMs: performance.now() - started, cpuMicros: cpuSince(cpu), trips: trips() - before }
}
if (LOOPS > 1) {
  await inLoops(WARMUP, "warm")
  const c = await inLoops(PAIRS, "measured")
  const n = Math.ceil(PAIRS / LOOPS) * LOOPS
  console.log(
    `${LOOPS} loops: ${((n * 1000) / c.wallMs).toFixed(0)} pairs/s, ${(c.cpuMicros / n).toFixed(0)} µs CPU per pair, ${(c.trips / n).toFixed(1)} round trips per pair, ${c.accepted}/${n} trades accepted`
  )
  await host.stop()
  proxy.close()
  if (FUNCTIONS) printFunctions(n + WARMUP)
  psql(`DROP DATABASE ${database} WITH (FORCE)`)
  process.exit(0)
}
await pairs(WARMUP, "warm")
if (statementsTracked) resetStatements(databaseUrl)
const mark = SERVER ? markServer(databaseUrl, database) : undefined
const m = await pairs(PAIRS, "measured")
const server = mark === undefined ? undefined : sinceMark(databaseUrl, database, mark)
console.log(
  `round trips: quote ${(m.quoteTrips / PAIRS).toFixed(1)}, trade ${(m.tradeTrips / PAIRS).toFixed(1)}; ` +
    `CPU: quote ${(m.quoteMicros / PAIRS).toFixed(0)} µs, trade ${(m.tradeMicros / PAIRS).toFixed(0)} µs; ` +
    `sequential ${((PAIRS * 1000) / m.wallMs).toFixed(0)} pairs/s; ${m.accepted}/${PAIRS} trades accepted`
)
if (TRACE) console.log(traced.join("\n"))
console.log("messages:", JSON.stringify(Object.fromEntries(counts)))
if (server !== undefined) {
  console.log(`server per pair: ${(server.walBytes / PAIRS).toFixed(0)} WAL bytes, ${(server.cpuMicros / PAIRS).toFixed(0)} µs CPU`)
}
await host.stop()
proxy.close()
if (FUNCTIONS) printFunctions(PAIRS + WARMUP)
if (statementsTracked) {
  printStatements(databaseUrl, PAIRS)
  // The sessions report their tables' counts as they end: give them a moment.
  execFileSync("sleep", ["0.5"])
  printTables(databaseUrl)
}
// SOKONI_PG_KEEP=1 keeps the database, to look at its rows and indexes after.
if (process.env.SOKONI_PG_KEEP !== "1") psql(`DROP DATABASE ${database} WITH (FORCE)`)
process.exit(0)
