/**
 * Steps of the effect runtime per quote and per trade, in process (the harness of in-process-pair.ts): each primitive
 * a fiber evaluates is counted, by kind. Deterministic, so a change to the command path is judged by it on a busy
 * machine where CPU figures swing (E-425); what a step costs is in the CPU profile, not here.
 *   node scripts/bench/effect-steps.ts [pairs, default 200]       totals
 *   STEPS_TOP=40 node scripts/bench/effect-steps.ts                and the most frequent steps of a trade, by kind
 * It counts through the fiber's tracer hook (`tracerContext`, Effect's internals of 4.0): a tool, not a test.
 */
import { makeEngineHost } from "../../engine/http/engine-host.ts"
import { benchHostConfig, benchPartner, callerOf, json, SANDBOX } from "./in-process.ts"
import { describeStep, installStepHook } from "./step-hook.ts"

const PAIRS = Number(process.argv[2] ?? 200)
const WARMUP = 100
const TOP = Number(process.env.STEPS_TOP ?? 0)

let counting: Map<string, number> | undefined
installStepHook((step) => {
  if (counting === undefined) return
  const kind = TOP > 0 ? describeStep(step, 70) : ""
  counting.set(kind, (counting.get(kind) ?? 0) + 1)
})

const host = await makeEngineHost(benchHostConfig({ store: "memory" }))
const call = callerOf(host)
const { key, symbol } = await benchPartner(call)
const quotes = new Map<string, number>()
const trades = new Map<string, number>()
for (let i = 0; i < WARMUP + PAIRS; i++) {
  const measured = i >= WARMUP
  counting = measured ? quotes : undefined
  const quote = await call("GET", `${SANDBOX}/quote/${symbol}?side=BUY&quantity=1`, key)
  counting = measured ? trades : undefined
  const body = { symbol, type: "BUY", quantity: 1, quoteId: json(quote).quoteId }
  await call("POST", `${SANDBOX}/trade`, { ...key, "idempotency-key": `steps-${String(i).padStart(8, "0")}` }, body)
  counting = undefined
}
await host.stop()
const total = (counts: Map<string, number>) => [...counts.values()].reduce((a, b) => a + b, 0) / PAIRS
console.log(`effect steps: quote ${total(quotes).toFixed(1)}, trade ${total(trades).toFixed(1)} (${PAIRS} pairs)`)
if (TOP > 0) for (const [kind, count] of [...trades].sort((a, b) => b[1] - a[1]).slice(0, TOP)) console.log(`${(count / PAIRS).toFixed(2).padStart(7)} ${kind}`)
