/**
 * The load generator (engine/load/arrival.ts) on a clock the test drives: iterations start at evenly spaced instants,
 * their count is exact, one due while the most allowed are still running is dropped and counted, and latency summaries
 * use nearest-rank percentiles. Plus the client against a local server, and a refused connection as status 0.
 */
import { createServer } from "node:http"
import { describe, expect, it } from "vitest"
import { Counters, dueAt, iterationsOf, makeClient, type Pacer, percentile, runArrivals, summarize } from "../../engine/load/arrival.ts"
import { freePort } from "../../engine/load/run.ts"

/** A clock that only moves when the generator sleeps: every wait is exact and costs no real time. */
const manualPacer = () => {
  let now = 1_000
  const sleeps: Array<number> = []
  const pacer: Pacer = {
    now: () => now,
    sleep: async (ms) => {
      sleeps.push(ms)
      now += ms
    }
  }
  return { pacer, sleeps, now: () => now }
}

/** A macrotask later: by then a generator on the manual clock has been through every due instant. */
const afterMicrotasks = () => new Promise<void>((resolve) => setImmediate(resolve))

describe("constant arrival rate", () => {
  it("offers rate x seconds iterations, rounded", () => {
    expect(iterationsOf({ rate: 834, seconds: 6, maxInFlight: 50 })).toBe(5004)
    expect(iterationsOf({ rate: 2.5, seconds: 3, maxInFlight: 1 })).toBe(8)
    expect(dueAt({ rate: 4, seconds: 1, maxInFlight: 1 }, 3)).toBe(750)
  })

  it("starts iteration i at i / rate seconds after the start, whatever the iterations take", async () => {
    const clock = manualPacer()
    const startedAt: Array<number> = []
    const outcome = await runArrivals({ rate: 100, seconds: 0.05, maxInFlight: 10 }, async () => void startedAt.push(clock.now() - 1_000), clock.pacer)
    expect(startedAt).toEqual([0, 10, 20, 30, 40])
    expect(outcome).toEqual({ started: 5, dropped: 0 })
  })

  it("drops and counts an iteration due while the most allowed are still running, and waits for those running", async () => {
    const clock = manualPacer()
    const release: Array<() => void> = []
    const started: Array<number> = []
    const run = runArrivals(
      { rate: 1_000, seconds: 0.005, maxInFlight: 2 },
      (i) =>
        new Promise<void>((resolve) => {
          started.push(i)
          release.push(resolve)
        }),
      clock.pacer
    )
    let finished = false
    void run.then(() => {
      finished = true
    })
    await afterMicrotasks()
    expect(started).toEqual([0, 1])
    expect(finished).toBe(false)
    for (const r of release) r()
    expect(await run).toEqual({ started: 2, dropped: 3 })
  })

  it("frees a slot when an iteration ends, so a later one starts again", async () => {
    const clock = manualPacer()
    const started: Array<number> = []
    const outcome = await runArrivals({ rate: 1_000, seconds: 0.004, maxInFlight: 1 }, async (i) => void started.push(i), clock.pacer)
    expect(started).toEqual([0, 1, 2, 3])
    expect(outcome.dropped).toBe(0)
  })

  it("rejects with the first error an iteration threw, after the others finished", async () => {
    const clock = manualPacer()
    let finished = 0
    const run = runArrivals(
      { rate: 1_000, seconds: 0.004, maxInFlight: 5 },
      async (i) => {
        if (i === 1 || i === 2) throw new Error(`profile bug ${i}`)
        finished++
      },
      clock.pacer
    )
    await expect(run).rejects.toThrow("profile bug 1")
    expect(finished).toBe(2)
  })
})

describe("summaries", () => {
  it("takes nearest-rank percentiles", () => {
    const sorted = Array.from({ length: 100 }, (_, i) => i + 1)
    expect(percentile(sorted, 50)).toBe(50)
    expect(percentile(sorted, 95)).toBe(95)
    expect(percentile(sorted, 99)).toBe(99)
    expect(percentile([7], 99)).toBe(7)
    expect(percentile([], 50)).toBeNaN()
  })

  it("summarizes unsorted values, and nothing as undefined", () => {
    expect(summarize([3, 1, 2, 10])).toEqual({ avg: 4, "p(50)": 2, "p(95)": 10, "p(99)": 10, max: 10 })
    expect(summarize([])).toBeUndefined()
  })

  it("counts by name with tags, from zero", () => {
    const counters = new Counters()
    counters.add("admitted{phase:one}")
    counters.add("admitted{phase:one}", 2)
    expect(counters.get("admitted{phase:one}")).toBe(3)
    expect(counters.get("admitted{phase:two}")).toBe(0)
  })
})

describe("the client", () => {
  it("answers with status, headers and body over a kept-alive socket", async () => {
    const sockets = new Set<unknown>()
    const server = createServer((req, res) => {
      sockets.add(req.socket)
      res.writeHead(201, { "x-echo": req.headers["x-api-key"] ?? "" })
      res.end(`${req.method} ${req.url}`)
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const address = server.address()
    const base = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`
    const client = makeClient(1)
    try {
      const first = await client.send("POST", `${base}/a`, { "x-api-key": "k1" }, "{}")
      const second = await client.send("GET", `${base}/b`, { "x-api-key": "k2" })
      expect([first.status, first.headers["x-echo"], first.body]).toEqual([201, "k1", "POST /a"])
      expect([second.status, second.body]).toEqual([201, "GET /b"])
      expect(sockets.size).toBe(1)
    } finally {
      client.close()
      await new Promise((resolve) => server.close(resolve))
    }
  })

  it("answers a refused connection with status 0 and the reason, without throwing", async () => {
    const port = await freePort()
    const client = makeClient(1)
    const answer = await client.send("GET", `http://127.0.0.1:${port}/`, {})
    client.close()
    expect(answer.status).toBe(0)
    expect(answer.error).toMatch(/ECONNREFUSED/)
  })
})
