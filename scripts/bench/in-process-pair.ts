/**
 * quote->trade without sockets: the engine host's `handle` called directly (gateway, guards, idempotency, handlers,
 * the memory store), so what the commands cost is apart from what HTTP costs. Prints µs of this process's CPU per
 * quote and per trade. Used to judge where quote->trade's CPU goes (docs/performance.md); not a target of its own.
 *   node scripts/bench/in-process-pair.ts [pairs, default 3000]
 * Run it on an idle machine; `node --cpu-prof scripts/bench/in-process-pair.ts` profiles the same loop, and
 * `node scripts/bench/alloc-pair.ts [pairs]` gives the bytes it allocates per pair.
 */
import { makeEngineHost } from "../../engine/http/engine-host.ts"
import { benchHostConfig, benchPartner, callerOf, json, SANDBOX } from "./in-process.ts"

const PAIRS = Number(process.argv[2] ?? 3000)
const WARMUP = 1000

const host = await makeEngineHost(benchHostConfig({ store: "memory" }))

const call = callerOf(host)
const { key, symbol } = await benchPartner(call)

const cpuSince = (start: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(start)
  return used.user + used.system
}

/** `count` pairs; the CPU of quotes and of trades, and how many trades were accepted. */
const pairs = async (count: number, tag: string) => {
  let quoteMicros = 0
  let tradeMicros = 0
  let accepted = 0
  for (let i = 0; i < count; i++) {
    const beforeQuote = process.cpuUsage()
    const quote = await call("GET", `${SANDBOX}/quote/${symbol}?side=BUY&quantity=1`, key)
    quoteMicros += cpuSince(beforeQuote)
    const body = { symbol, type: "BUY", quantity: 1, quoteId: json(quote).quoteId }
    const beforeTrade = process.cpuUsage()
    const trade = await call("POST", `${SANDBOX}/trade`, { ...key, "idempotency-key": `in-process-${tag}-${String(i).padStart(8, "0")}` }, body)
    tradeMicros += cpuSince(beforeTrade)
    if (trade.status === 202) accepted++
  }
  return { quoteMicros, tradeMicros, accepted }
}

await pairs(WARMUP, "warm")
// Under `--expose-gc --trace-gc-nvp` (alloc-pair.ts), full collections and markers bound the measured loop, so the
// `allocated=` fields between the markers sum to exactly what the loop allocated.
const gc = (globalThis as { gc?: () => void }).gc
gc?.()
if (gc) console.log("ALLOC-MEASURE-START")
const measured = await pairs(PAIRS, "measured")
gc?.()
if (gc) console.log("ALLOC-MEASURE-END")
console.log(
  `quote ${(measured.quoteMicros / PAIRS).toFixed(0)} µs, trade ${(measured.tradeMicros / PAIRS).toFixed(0)} µs of CPU (${measured.accepted}/${PAIRS} trades accepted)`
)
await host.stop()
