/**
 * Tenants on the postgres store (issue 22 item 3, E-322), and on the memory store for isolation (issue 25 item 2:
 * GC stalls under a flood): does one partner wait on another, and do two engine
 * processes on one database serve more than one? Each comparison runs on every engine variant (this checkout, and
 * `--baseline DIR` when given), in interleaved rounds.
 * - isolation: partner A at a steady 20 quote->trade pairs/s (paced.ts) alone, then while partner B floods the same
 *   engine with quote->trade over 50 connections (cannon.ts); A's request p99 under the flood over A's p99 alone.
 * - processes: partners A and B, 25 connections of quote->trade each, served by one engine process, then by two
 *   processes on one database (A on the first, B on the second); every engine process is pinned to the server core.
 */
import type { PacedResult, PacedSpec } from "./paced.ts"
import { type LoadResult, runChild, runLoad } from "./load.ts"
import { median, table } from "./report.ts"
import { capture, createPartner, type Engine, type Store, startBare, startEngine, stop } from "./targets.ts"

export interface Variant {
  readonly name: string
  readonly cwd?: string | undefined
  /** postgres unless named. */
  readonly store?: Store | undefined
  /** Node or V8 flags for its engine's process (targets.ts). */
  readonly nodeFlags?: readonly string[] | undefined
}

export interface TenantSettings {
  readonly rounds: number
  readonly seconds: number
  readonly warmupSeconds: number
  readonly connections: number
  readonly pairsPerSecond: number
}

/**
 * The quiet partner's client runs on the load core beside the flood's generator, which keeps that core busy; under the
 * FIFO scheduler it runs whenever it has work, as a partner on a machine of its own would, so its latency is the
 * server's (without it, bare node:http itself showed a p99 under the flood 3 to 19 times its p99 alone).
 */
const runPaced = (spec: PacedSpec): Promise<PacedResult> => runChild<PacedResult>("scripts/bench/paced.ts", spec, "paced client", { realtime: true })

const symbolOf = async (engine: Engine): Promise<string> => {
  const list = (await (await fetch(`${engine.base}${engine.prefix}/stocks`, { headers: { "x-api-key": engine.apiKey } })).json()) as {
    stocks: { symbol: string }[]
  }
  return list.stocks[0]!.symbol
}

const flood = (engine: Engine, apiKey: string, symbol: string, connections: number, settings: TenantSettings): Promise<LoadResult> =>
  runLoad({
    base: engine.base,
    prefix: engine.prefix,
    apiKey,
    symbol,
    flow: "trade",
    connections,
    warmup: { seconds: settings.warmupSeconds },
    measure: { seconds: settings.seconds },
    serverPid: engine.pid
  })

export interface IsolationSample {
  readonly variant: string
  readonly round: number
  readonly alone: PacedResult
  readonly flooded: PacedResult
  readonly flood: LoadResult
}

/**
 * bare node:http replaying the engine's quote and trade answers (bare-server.ts), measured the same way: the floor of
 * what this method can show on this machine, beside the engines' ratios.
 */
const bareLike = async (engine: Engine, symbol: string): Promise<{ engine: Engine; keyB: string; symbol: string }> => {
  const quote = await capture(engine, "GET", `/quote/${encodeURIComponent(symbol)}?side=BUY&quantity=1`)
  const quoteId = (JSON.parse(quote.body) as { quoteId: string }).quoteId
  const body = JSON.stringify({ symbol, type: "BUY", quantity: 1, quoteId })
  const trade = await capture(engine, "POST", "/trade", { "content-type": "application/json", "idempotency-key": `isolation-capture-${process.pid}` }, body)
  const bare = await startBare([quote, trade].map((r) => ({ ...r, pathPrefix: engine.prefix + r.pathPrefix })))
  return { engine: { ...engine, ...bare, name: "bare-node" }, keyB: engine.apiKey, symbol }
}

export const isolation = async (variants: readonly Variant[], settings: TenantSettings, log: (line: string) => void): Promise<IsolationSample[]> => {
  const engines = new Map<string, { engine: Engine; keyB: string; symbol: string }>()
  for (const variant of variants) {
    const engine = await startEngine(variant.store ?? "postgres", { cwd: variant.cwd, name: variant.name, nodeFlags: variant.nodeFlags })
    const { apiKey: keyB } = await createPartner(engine.base, "Flood")
    engines.set(variant.name, { engine, keyB, symbol: await symbolOf(engine) })
  }
  const first = [...engines.values()][0]
  if (first !== undefined) engines.set("bare-node", await bareLike(first.engine, first.symbol))
  const measured: readonly Variant[] = first === undefined ? variants : [...variants, { name: "bare-node" }]
  const samples: IsolationSample[] = []
  for (let round = 1; round <= settings.rounds; round++) {
    for (const variant of measured.map((_, i) => measured[(i + round - 1) % measured.length]!)) {
      const { engine, keyB, symbol } = engines.get(variant.name)!
      const paced: PacedSpec = {
        base: engine.base,
        prefix: engine.prefix,
        apiKey: engine.apiKey,
        symbol,
        pairsPerSecond: settings.pairsPerSecond,
        warmupSeconds: settings.warmupSeconds,
        seconds: settings.seconds
      }
      const alone = await runPaced(paced)
      const [flooded, floodResult] = await Promise.all([runPaced(paced), flood(engine, keyB, symbol, settings.connections, settings)])
      log(
        `  [isolation] round ${round}/${settings.rounds} ${variant.name.padEnd(24)} A alone p99 ${alone.requestP99.toFixed(1)} ms, under B's flood p99 ${flooded.requestP99.toFixed(1)} ms (B ${floodResult.rate.toFixed(0)} pairs/s), A failures ${alone.failures + flooded.failures}${flooded.firstFailure === undefined ? "" : ` (${flooded.firstFailure})`}`
      )
      samples.push({ variant: variant.name, round, alone, flooded, flood: floodResult })
    }
  }
  await Promise.all([...engines.values()].map(({ engine }) => stop(engine.child)))
  return samples
}

export const isolationRatio = (samples: readonly IsolationSample[], variant: string): number => {
  const mine = samples.filter((s) => s.variant === variant)
  return median(mine.map((s) => s.flooded.requestP99)) / median(mine.map((s) => s.alone.requestP99))
}

export const isolationTable = (samples: readonly IsolationSample[]): string => {
  const variants = [...new Set(samples.map((s) => s.variant))]
  const ms = (v: number) => (Number.isFinite(v) ? v.toFixed(1) : "n/a")
  return table(
    [
      "engine",
      "A alone p50 / p99 ms",
      "per round p99",
      "A under B's flood p50 / p99 ms",
      "per round p99",
      "p99 flood / alone",
      "B's flood pairs/s",
      "A failures"
    ],
    variants.map((variant) => {
      const mine = samples.filter((s) => s.variant === variant)
      const med = (pick: (s: IsolationSample) => number) => median(mine.map(pick))
      return [
        variant,
        `${ms(med((s) => s.alone.requestP50))} / ${ms(med((s) => s.alone.requestP99))}`,
        mine.map((s) => ms(s.alone.requestP99)).join(" / "),
        `${ms(med((s) => s.flooded.requestP50))} / ${ms(med((s) => s.flooded.requestP99))}`,
        mine.map((s) => ms(s.flooded.requestP99)).join(" / "),
        `${isolationRatio(samples, variant).toFixed(2)}x`,
        med((s) => s.flood.rate).toFixed(0),
        String(mine.reduce((n, s) => n + s.alone.failures + s.flooded.failures, 0))
      ]
    })
  )
}

export interface ProcessesSample {
  readonly variant: string
  readonly round: number
  readonly processes: 1 | 2
  readonly rate: number
  readonly failures: number
  /** The server core's time the engine process(es) used over the phase (1 = the whole core): is it the limit? */
  readonly coreBusy: number
}

/** One engine process's CPU over a flood's measured phase, as a fraction of one core. */
const coreShare = (r: LoadResult) => (r.seconds > 0 ? (r.serverCpuMicrosPerOp * r.operations) / (r.seconds * 1_000_000) : 0)

/** Both partners' quote->trade at once; their pairs/s summed, and the engines' CPU (one process counted once). */
const both = async (a: { engine: Engine; key: string }, b: { engine: Engine; key: string }, symbol: string, settings: TenantSettings) => {
  const half = Math.max(1, settings.connections >> 1)
  const results = await Promise.all([flood(a.engine, a.key, symbol, half, settings), flood(b.engine, b.key, symbol, half, settings)])
  const shared = a.engine.pid === b.engine.pid
  const coreBusy = shared ? coreShare(results[0]) : coreShare(results[0]) + coreShare(results[1])
  return { rate: results.reduce((n, r) => n + r.rate, 0), failures: results.reduce((n, r) => n + r.failures, 0), coreBusy }
}

const pct = (share: number) => `${(share * 100).toFixed(0)}%`

export const processes = async (variants: readonly Variant[], settings: TenantSettings, log: (line: string) => void): Promise<ProcessesSample[]> => {
  const setups = new Map<string, { single: [Engine, string]; pair: [Engine, Engine]; symbol: string }>()
  for (const variant of variants) {
    const single = await startEngine("postgres", { cwd: variant.cwd, name: `${variant.name} x1` })
    const { apiKey } = await createPartner(single.base, "Second")
    const first = await startEngine("postgres", { cwd: variant.cwd, name: `${variant.name} x2 #1` })
    // The second process: same database, its own seed (same-seed processes collide on ids until issue 22 item 2).
    const second = await startEngine("postgres", { cwd: variant.cwd, name: `${variant.name} x2 #2`, databaseUrl: first.databaseUrl, seed: 2 })
    setups.set(variant.name, { single: [single, apiKey], pair: [first, second], symbol: await symbolOf(single) })
  }
  const samples: ProcessesSample[] = []
  for (let round = 1; round <= settings.rounds; round++) {
    for (const variant of variants.map((_, i) => variants[(i + round - 1) % variants.length]!)) {
      const { single, pair, symbol } = setups.get(variant.name)!
      const one = await both({ engine: single[0], key: single[0].apiKey }, { engine: single[0], key: single[1] }, symbol, settings)
      const two = await both({ engine: pair[0], key: pair[0].apiKey }, { engine: pair[1], key: pair[1].apiKey }, symbol, settings)
      log(
        `  [processes] round ${round}/${settings.rounds} ${variant.name.padEnd(24)} one process ${one.rate.toFixed(0)} pairs/s (server core ${pct(one.coreBusy)} busy), two processes ${two.rate.toFixed(0)} pairs/s (${pct(two.coreBusy)}) (failures ${one.failures + two.failures})`
      )
      samples.push({ variant: variant.name, round, processes: 1, ...one }, { variant: variant.name, round, processes: 2, ...two })
    }
  }
  await Promise.all([...setups.values()].flatMap((s) => [s.single[0], ...s.pair]).map((e) => stop(e.child)))
  return samples
}

export const processesRatio = (samples: readonly ProcessesSample[], variant: string): number => {
  const rate = (n: 1 | 2) => median(samples.filter((s) => s.variant === variant && s.processes === n).map((s) => s.rate))
  return rate(2) / rate(1)
}

export const processesTable = (samples: readonly ProcessesSample[]): string => {
  const variants = [...new Set(samples.map((s) => s.variant))]
  return table(
    ["engine", "one process pairs/s", "per round", "two processes pairs/s", "per round", "two / one", "server core busy, one / two", "failures"],
    variants.map((variant) => {
      const of = (n: 1 | 2) => samples.filter((s) => s.variant === variant && s.processes === n)
      return [
        variant,
        median(of(1).map((s) => s.rate)).toFixed(0),
        of(1)
          .map((s) => s.rate.toFixed(0))
          .join(" / "),
        median(of(2).map((s) => s.rate)).toFixed(0),
        of(2)
          .map((s) => s.rate.toFixed(0))
          .join(" / "),
        `${processesRatio(samples, variant).toFixed(2)}x`,
        `${pct(median(of(1).map((s) => s.coreBusy)))} / ${pct(median(of(2).map((s) => s.coreBusy)))}`,
        String(samples.filter((s) => s.variant === variant).reduce((n, s) => n + s.failures, 0))
      ]
    })
  )
}
