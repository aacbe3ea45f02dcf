/**
 * The load tool's generator (E-530, in place of k6): an open model, as k6's constant-arrival-rate executor is. An
 * iteration starts every 1/rate seconds whether or not earlier ones have answered, so a slow target shows as latency
 * and dropped iterations, not as a politely slower client. Iterations that fall due while `maxInFlight` are still
 * running are dropped and counted (k6's maxVUs). Plus the HTTP client (kept-alive sockets) and the metrics a profile
 * keeps: counters by name and tags, latency trends, checks.
 * Owns: pacing, the client, the arithmetic of a summary. Does not own what a profile sends or concludes. Real time and
 * sockets by nature (a load tool, not engine logic; test/support/determinism.ts lists engine/load/ as such).
 */
import { Agent, request } from "node:http"

export interface ArrivalPlan {
  /** Iterations per second. */
  readonly rate: number
  readonly seconds: number
  /** At most this many iterations at once; one due beyond it is dropped. */
  readonly maxInFlight: number
}

export interface ArrivalOutcome {
  readonly started: number
  readonly dropped: number
}

/** How many iterations a plan offers: rate x seconds, rounded (the count is exact whatever the machine's speed). */
export const iterationsOf = (plan: ArrivalPlan) => Math.round(plan.rate * plan.seconds)

/** The instant (ms after the plan's start) iteration `i` falls due: evenly spaced, the first at 0. */
export const dueAt = (plan: ArrivalPlan, i: number) => (i * 1000) / plan.rate

/**
 * Where the load tool reads the time and waits: the wall clock (the only place engine/load/ touches it), or a test's
 * own. A load tool measures real sockets in real time, so its live pacer is the wall clock by nature; the engine it
 * drives keeps its own Clock seam.
 */
export interface Pacer {
  readonly now: () => number
  readonly sleep: (ms: number) => Promise<void>
}

export const wallPacer: Pacer = {
  now: () => performance.now(),
  sleep: (ms) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)))
}

/**
 * Runs a plan: starts iteration i at `dueAt(i)` (late ones start as soon as the loop wakes, so a late timer delays
 * them but never loses them), resolves when every started iteration has finished. `iterate` must not throw; a thrown
 * error is the profile's bug and rejects the run.
 */
export const runArrivals = async (plan: ArrivalPlan, iterate: (i: number) => Promise<void>, pacer: Pacer = wallPacer): Promise<ArrivalOutcome> => {
  const total = iterationsOf(plan)
  const origin = pacer.now()
  const running = new Set<Promise<void>>()
  let started = 0
  let dropped = 0
  let failure: unknown
  for (let i = 0; i < total; i++) {
    const wait = origin + dueAt(plan, i) - pacer.now()
    if (wait >= 1) await pacer.sleep(wait)
    if (running.size >= plan.maxInFlight) {
      dropped++
      continue
    }
    started++
    const run: Promise<void> = iterate(i).then(
      () => void running.delete(run),
      (error: unknown) => {
        failure ??= error
        running.delete(run)
      }
    )
    running.add(run)
  }
  await Promise.all(running)
  if (failure !== undefined) throw failure
  return { started, dropped }
}

export interface Answer {
  /** 0 when no answer came (refused connection, reset socket): a failed request. */
  readonly status: number
  readonly headers: Record<string, string | string[] | undefined>
  readonly body: string
  readonly ms: number
  readonly error?: string
}

/** A kept-alive HTTP/1.1 client; never rejects: a transport error is an answer with status 0. */
export const makeClient = (maxSockets: number, pacer: Pacer = wallPacer) => {
  const agent = new Agent({ keepAlive: true, maxSockets })
  const send = (method: string, url: string, headers: Record<string, string>, body?: string): Promise<Answer> =>
    new Promise((resolve) => {
      const started = pacer.now()
      const fail = (error: Error) => resolve({ status: 0, headers: {}, body: "", ms: pacer.now() - started, error: error.message })
      const req = request(url, { method, agent, headers }, (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (chunk: Buffer) => chunks.push(chunk))
        res.on("error", fail)
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8"), ms: pacer.now() - started })
        )
      })
      req.on("error", fail)
      req.end(body)
    })
  return { send, close: () => agent.destroy() }
}

export type Client = ReturnType<typeof makeClient>

export interface TrendSummary {
  readonly avg: number
  readonly "p(50)": number
  readonly "p(95)": number
  readonly "p(99)": number
  readonly max: number
}

/** Nearest-rank percentile of sorted values (p in 0..100). */
export const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted.length === 0 ? Number.NaN : (sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] as number)

/** avg, p(50), p(95), p(99) and max, under k6's names (the summaries and reports kept them); undefined when empty. */
export const summarize = (values: ReadonlyArray<number>): TrendSummary | undefined => {
  if (values.length === 0) return undefined
  const sorted = [...values].sort((a, b) => a - b)
  const sum = sorted.reduce((a, b) => a + b, 0)
  return {
    avg: sum / sorted.length,
    "p(50)": percentile(sorted, 50),
    "p(95)": percentile(sorted, 95),
    "p(99)": percentile(sorted, 99),
    max: sorted[sorted.length - 1] as number
  }
}

/** Counters keyed by a name and tags, e.g. `admitted{phase:one}`, as the thresholds and the summaries name them. */
export class Counters {
  private readonly counts = new Map<string, number>()
  add(name: string, by = 1) {
    this.counts.set(name, (this.counts.get(name) ?? 0) + by)
  }
  get(name: string) {
    return this.counts.get(name) ?? 0
  }
}
