/**
 * Steps of the effect runtime per quote and per trade, in process (the harness of in-process-pair.ts): each primitive
 * a fiber evaluates is counted, by kind. Deterministic, so a change to the command path is judged by it on a busy
 * machine where CPU figures swing (E-425); what a step costs is in the CPU profile, not here.
 *   node scripts/bench/effect-steps.ts [pairs, default 200]       totals
 *   STEPS_TOP=40 node scripts/bench/effect-steps.ts                and the most frequent steps of a trade, by kind
 *   STEPS_TOP=40 STEPS_OF=quote node scripts/bench/effect-steps.ts ... of a quote
 *   STEPS_STORE=postgres node scripts/bench/effect-steps.ts        on a database it creates and drops on the server of
 *                                                                  $DATABASE_URL (default local), named $SOKONI_DB_PREFIX<pid>
 * It counts through the fiber's tracer hook (`tracerContext`, Effect's internals of 4.0): a tool, not a test.
 */
import { execFileSync } from "node:child_process"
import { makeEngineHost } from "../../engine/http/engine-host.ts"
import { databaseUrlFor } from "../../engine/store/pg-temp-db.ts"
import { benchHostConfig, benchPartner, callerOf, json, SANDBOX } from "./in-process.ts"
import { describeStep, installStepHook } from "./step-hook.ts"

const PAIRS = Number(process.argv[2] ?? 200)
const WARMUP = 100
const TOP = Number(process.env.STEPS_TOP ?? 0)

let counting: Map<string, number> | undefined
installStepHook((step) => {
  if (counting === undefined) return
  const kind = TOP > 0 ? describeStep(step, 100) : ""
  counting.set(kind, (counting.get(kind) ?? 0) + 1)
})

const ADMIN_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"
const database = process.env.STEPS_STORE === "postgres" ? `${process.env.SOKONI_DB_PREFIX ?? "sokoni_steps_"}${process.pid}` : undefined
if (database !== undefined) execFileSync("psql", [ADMIN_URL, "-qc", `CREATE DATABASE ${database}`])
const host = await makeEngineHost(
  benchHostConfig(database === undefined ? { store: "memory" } : { store: "postgres", databaseUrl: databaseUrlFor(ADMIN_URL, database) })
)
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
if (database !== undefined) execFileSync("psql", [ADMIN_URL, "-qc", `DROP DATABASE ${database} WITH (FORCE)`])
const total = (counts: Map<string, number>) => [...counts.values()].reduce((a, b) => a + b, 0) / PAIRS
console.log(`effect steps: quote ${total(quotes).toFixed(1)}, trade ${total(trades).toFixed(1)} (${PAIRS} pairs)`)
if (TOP > 0)
  for (const [kind, count] of [...(process.env.STEPS_OF === "quote" ? quotes : trades)].sort((a, b) => b[1] - a[1]).slice(0, TOP))
    console.log(`${(count / PAIRS).toFixed(2).padStart(7)} ${kind}`)
