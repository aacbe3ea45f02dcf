/**
 * Memory per order (issue 25 item 2): an in-process engine on the memory store, as `serve` runs it (follow clock,
 * rate limits off, manual desk, a bounded trace), places quote->trade pairs one after another, `batch` a day: after
 * each batch the clock moves 25 h on (to the next moment the markets are open), past the 24 h an Idempotency-Key
 * answer is kept and the TTL of every quote. After the first batch, after `from` and after `to` orders it forces a
 * full GC and reads V8's used heap. Two figures:
 * - **kept per order**: the growth from `from` to `to` orders over the orders in between. Both readings hold one
 *   day's batch whose answers are still within 24 h, so this is what an order leaves for good: the order, its
 *   events, journal entries, wallet transactions and audit record, and anything that leaks;
 * - **within 24 h**: the growth over the first batch, from an engine with only its partner: what an order costs
 *   while its answer may still be replayed and its quote still answers STALE_QUOTE (a flood's growth).
 * Run in its own process with --expose-gc (run.ts does so).
 * Usage: node --expose-gc memory.ts '{"from":10000,"to":100000,"batch":10000}'
 * Prints one JSON line: a MemoryRow (report.ts).
 */
import { getHeapStatistics } from "node:v8"
import { nextInstantAllOpen } from "../../engine/domain/calendar.ts"
import { makeInProcessEngine } from "../../engine/runtime.ts"
import { wallClockNow } from "../../engine/sim/clock.ts"
import { Trace } from "../../engine/sim/trace.ts"
import type { MemoryRow } from "./report.ts"

export interface MemorySpec {
  readonly from: number
  readonly to: number
  /** Orders per simulated day; `from` and `to` are multiples of it. */
  readonly batch: number
}

const ADMIN = "adm_memory"
const spec = JSON.parse(process.argv[2] ?? '{"from":10000,"to":100000,"batch":10000}') as MemorySpec
const gc = (globalThis as { gc?: () => void }).gc
if (gc === undefined) throw new Error("run with node --expose-gc")

const engine = makeInProcessEngine({
  store: "memory",
  clock: "follow",
  // As `serve` starts: at the next moment its markets are open, so the orders are accepted.
  start: nextInstantAllOpen(wallClockNow()),
  seed: 1,
  desk: "manual",
  adminToken: ADMIN,
  rateLimit: "off",
  trace: Trace.layerRing(1000)
})
const base = "http://sokoni.local"
const call = async (method: string, path: string, headers: Record<string, string>, body?: unknown) => {
  const response = await engine.fetch(
    new Request(`${base}${path}`, {
      method,
      headers: body === undefined ? headers : { ...headers, "content-type": "application/json" },
      body: body === undefined ? null : JSON.stringify(body)
    })
  )
  return { status: response.status, json: (await response.json()) as Record<string, unknown> }
}
const admin = { authorization: `Bearer ${ADMIN}` }
const partner = await call("POST", "/_sim/partners", admin, { businessName: "Memory", email: "memory@sokoni.test", tier: "enterprise" })
const partnerId = String(partner.json.partnerId)
await call("POST", `/_sim/partners/${partnerId}/wallet/credit`, admin, { environment: "sandbox", amount: 100_000_000 })
const key = { "x-api-key": String(partner.json.sandboxKey) }
const prefix = "/api/sandbox/v1/partner"
const symbol = String(((await call("GET", `${prefix}/stocks`, key)).json.stocks as Array<{ symbol: string }>)[0]?.symbol)

let failures = 0
const pair = async (n: number) => {
  const quote = await call("GET", `${prefix}/quote/${symbol}?side=BUY&quantity=1`, key)
  const trade = await call(
    "POST",
    `${prefix}/trade`,
    { ...key, "idempotency-key": `memory-${n}` },
    { symbol, type: "BUY", quantity: 1, quoteId: quote.json.quoteId }
  )
  if (trade.status !== 202 && failures++ === 0)
    console.error(`first failure: ${trade.status} ${JSON.stringify(trade.json)} after quote ${quote.status} ${JSON.stringify(quote.json)}`)
}
const heapMB = () => {
  gc()
  gc()
  return getHeapStatistics().used_heap_size / 1024 / 1024
}

/** The next day: 25 h on, then on to the next moment the markets are open (jobs due on the way run). */
const nextDay = async () => {
  const now = Date.parse(String((await call("GET", "/_sim/clock", admin)).json.now))
  const to = nextInstantAllOpen(now + 25 * 3_600_000) ?? now + 25 * 3_600_000
  const moved = await call("POST", "/_sim/clock/advance", admin, { to: new Date(to).toISOString() })
  if (moved.status !== 200) throw new Error(`clock advance: ${moved.status} ${JSON.stringify(moved.json)}`)
}

const started = performance.now()
const heapStart = heapMB()
let heapFirstDay = 0
let heapFrom = 0
for (let n = 0; n < spec.to; n++) {
  await pair(n)
  if ((n + 1) % spec.batch !== 0) continue
  if (n + 1 === spec.batch) heapFirstDay = heapMB()
  if (n + 1 === spec.from) heapFrom = heapMB()
  if (n + 1 < spec.to) await nextDay()
}
const heapTo = heapMB()
const result: MemoryRow = {
  from: spec.from,
  batch: spec.batch,
  to: spec.to,
  heapFromMB: heapFrom,
  heapToMB: heapTo,
  bytesPerOrder: ((heapTo - heapFrom) * 1024 * 1024) / (spec.to - spec.from),
  bytesPerOrderWithinDay: ((heapFirstDay - heapStart) * 1024 * 1024) / spec.batch,
  seconds: (performance.now() - started) / 1000,
  failures
}
await engine.dispose()
console.log(JSON.stringify(result))
