/**
 * Graceful stop of a `sokoni serve` process under keep-alive load (issue #22 item 7, E-278), on the memory store and,
 * with DATABASE_URL, on PostgreSQL: after SIGTERM no new request is admitted on a kept-alive connection (answers
 * written after the stop began say `connection: close`, a request arriving after it is refused with 503), the
 * requests under way finish, no request sent before the signal is cut, and the process exits 0 once they are done.
 * The assertions are on order and counts; the 20 s exit bound is a failure bound only.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { Agent, request } from "node:http"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { onPostgres } from "../support/stores.ts"
import { adminUrl, freePort, send, withDatabase } from "./node-server-kit.ts"

const ROOT = join(import.meta.dirname, "..", "..")
const BIN = join(ROOT, "engine", "cli", "bin.ts")
const WORKERS = 8
/** Answers each worker gets before the signal, so every connection is kept alive and busy when it comes. */
const WARM = 5

interface Outcome {
  readonly worker: number
  readonly sentAfterSignal: boolean
  readonly status?: number
  readonly closing?: boolean
  readonly error?: string
}

const spawnServe = (args: ReadonlyArray<string>) => {
  const child = spawn(process.execPath, [BIN, "serve", "--admin-token", "t", "--clock", "manual", "--seed", "1", ...args], {
    cwd: ROOT,
    env: { ...process.env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let stdout = ""
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout?.on("data", (c: Buffer) => {
      stdout += c.toString("utf8")
      if (stdout.includes("ready in")) resolve()
    })
    child.on("exit", () => reject(new Error(`serve exited before it was ready:\n${stdout}`)))
  })
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
  return { child, ready, exited }
}

/** One keep-alive GET on `agent`: its status and whether the server said it closes the connection, or the error. */
const get = (agent: Agent, port: number, path: string, headers: Record<string, string>) =>
  new Promise<{ status?: number; closing?: boolean; error?: string }>((resolve) => {
    const req = request({ host: "127.0.0.1", port, path, headers, agent }, (res) => {
      res.resume()
      res.on("end", () => resolve({ status: res.statusCode ?? 0, closing: res.headers.connection === "close" }))
      res.on("error", (e: NodeJS.ErrnoException) => resolve({ error: e.code ?? e.message }))
    })
    req.on("error", (e: NodeJS.ErrnoException) => resolve({ error: e.code ?? e.message }))
    req.end()
  })

const failAfter = (ms: number, what: string) => new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what} took over ${ms} ms`)), ms).unref())

/** Keeps WORKERS keep-alive connections busy, sends SIGTERM once each has been answered WARM times, records all. */
const drainUnderLoad = async (child: ChildProcess, exited: Promise<number | null>, port: number) => {
  const made = await send(
    port,
    "POST",
    "/_sim/partners",
    { authorization: "Bearer t", "content-type": "application/json" },
    JSON.stringify({ businessName: "Drain", email: "drain@stop.test" })
  )
  const key = { "x-api-key": JSON.parse(made.body).sandboxKey as string }
  const outcomes: Array<Outcome> = []
  let signalled = false
  let warmed = 0
  const allWarm = Promise.withResolvers<void>()
  const worker = async (n: number) => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 })
    for (let answered = 0; ; answered++) {
      const sentAfterSignal = signalled
      const outcome = await get(agent, port, "/api/sandbox/v1/partner/wallet", key)
      outcomes.push({ worker: n, sentAfterSignal, ...outcome })
      if (answered + 1 === WARM && ++warmed === WORKERS) allWarm.resolve()
      // A refused connection means the server has stopped listening: this worker is done.
      if (outcome.error !== undefined && sentAfterSignal) break
    }
    agent.destroy()
  }
  const workers = Promise.all(Array.from({ length: WORKERS }, (_, n) => worker(n)))
  await allWarm.promise
  signalled = true
  const signalledAt = performance.now()
  child.kill("SIGTERM")
  const code = await Promise.race([exited, failAfter(20_000, "exit after SIGTERM")])
  const exitMs = performance.now() - signalledAt
  await Promise.race([workers, failAfter(20_000, "the workers' end")])
  return { code, exitMs, outcomes }
}

const assertDrained = ({ code, outcomes }: { code: number | null; outcomes: ReadonlyArray<Outcome> }) => {
  expect(code).toBe(0)
  // Nothing sent before the signal was cut: each got an answer.
  expect(outcomes.filter((o) => !o.sentAfterSignal && o.error !== undefined)).toEqual([])
  // After the signal a connection carries at most its request under way and one that raced the signal: then the
  // server says it closes the connection, and new connections are refused.
  for (let n = 0; n < WORKERS; n++) {
    const admitted = outcomes.filter((o) => o.worker === n && o.sentAfterSignal && o.status === 200 && o.closing !== true)
    expect(admitted.length, `worker ${n}: keep-alive answers after the signal`).toBeLessThanOrEqual(2)
  }
  // Once any answer said the connection closes, no later request got a keep-alive answer.
  const firstClosing = outcomes.findIndex((o) => o.closing === true)
  if (firstClosing !== -1) expect(outcomes.slice(firstClosing).filter((o) => o.status !== undefined && o.closing !== true)).toEqual([])
  // Every answer written after the stop began refuses (503) or finishes a request already under way (200).
  expect(outcomes.filter((o) => o.closing === true && o.status !== 200 && o.status !== 503)).toEqual([])
}

describe("sokoni serve stops gracefully under keep-alive load", () => {
  it("memory store: admits nothing new after SIGTERM, cuts nothing sent before, exits 0", async () => {
    const port = await freePort()
    const serve = spawnServe(["--port", String(port)])
    await Promise.race([serve.ready, failAfter(30_000, "serve's readiness")])
    const result = await drainUnderLoad(serve.child, serve.exited, port)
    assertDrained(result)
    console.log(`memory: exit ${Math.round(result.exitMs)} ms after SIGTERM, ${result.outcomes.length} requests`)
  })

  it.skipIf(adminUrl === undefined)("postgres store: admits nothing new after SIGTERM, cuts nothing sent before, exits 0", onPostgres, async () => {
    await withDatabase(adminUrl ?? "", async (url) => {
      const port = await freePort()
      const serve = spawnServe(["--port", String(port), "--store", "postgres", "--database-url", url])
      await Promise.race([serve.ready, failAfter(30_000, "serve's readiness")])
      const result = await drainUnderLoad(serve.child, serve.exited, port)
      assertDrained(result)
      console.log(`postgres: exit ${Math.round(result.exitMs)} ms after SIGTERM, ${result.outcomes.length} requests`)
    })
  })
})
