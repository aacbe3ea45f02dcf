/**
 * 40 concurrent $10 withdrawals from a $100 sub-wallet: exactly 10 succeed, the other 30 answer INSUFFICIENT_FUNDS,
 * the wallet ends at 0 and the journal balances. On the memory store, on PostgreSQL in one engine, and on two engine
 * processes (`sokoni serve`) sharing one PostgreSQL database, whose writers the store serialises with a
 * transaction-scoped advisory lock (decision E-024). The postgres parts need DATABASE_URL.
 */
import { spawn } from "node:child_process"
import { createServer } from "node:net"
import { join } from "node:path"
import { Effect, Exit, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { withTemporaryDatabase } from "../../engine/store/pg-temp-db.ts"
import { partnerOf, storeDocs } from "../http/accounts-kit.ts"
import { contractProblems, startEngine } from "../http/harness.ts"
import { onPostgres } from "../support/stores.ts"

const DATABASE_URL = process.env.DATABASE_URL
const ROOT = join(import.meta.dirname, "..", "..")
const BIN = join(ROOT, "engine", "cli", "bin.ts")
const ADMIN = "concurrency-admin"

const tally = (statuses: ReadonlyArray<{ status: number; code?: string }>) => ({
  ok: statuses.filter((s) => s.status === 200).length,
  short: statuses.filter((s) => s.status === 400 && s.code === "INSUFFICIENT_FUNDS").length
})

/** The race on one in-process engine. */
const race = async (engine: ReturnType<typeof startEngine>) => {
  const p = await partnerOf(engine)
  const { subAccountId: id } = await p.createUser()
  await p.deposit(id, 100)
  const replies = await Promise.all(Array.from({ length: 40 }, () => p.sb("POST", `/users/${id}/withdraw`, { amount: 10 })))
  expect(tally(replies.map((r) => ({ status: r.status, code: r.body?.error?.code })))).toEqual({ ok: 10, short: 30 })
  expect((await p.sb("GET", `/users/${id}`)).body.walletBalance).toBe(0)
  expect((await p.sb("GET", "/wallet")).body.balance).toBe(100000)
  // the ten successes saw ten different balances: 90, 80, ... 0
  expect(
    replies
      .filter((r) => r.status === 200)
      .map((r) => r.body.newBalance)
      .sort((a, b) => a - b)
  ).toEqual([0, 10, 20, 30, 40, 50, 60, 70, 80, 90])
  const journal = await storeDocs(engine, "journal", p.partition("sandbox"))
  expect(journal.filter((d) => (d.body as { kind: string }).kind === "WITHDRAWAL")).toHaveLength(10)
}

describe("40 concurrent withdrawals from a $100 wallet", () => {
  it("memory store: exactly 10 succeed", async () => {
    const engine = startEngine()
    try {
      await race(engine)
    } finally {
      await engine.dispose()
    }
  })

  describe.skipIf(DATABASE_URL === undefined)("postgres (skipped: set DATABASE_URL to run)", onPostgres, () => {
    const scope = Effect.runSync(Scope.make())
    let url = ""
    beforeAll(async () => {
      url = await Effect.runPromise(Scope.provide(withTemporaryDatabase(DATABASE_URL ?? ""), scope))
    })
    afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))

    it("one engine on postgres: exactly 10 succeed", async () => {
      const engine = startEngine({ store: "postgres", databaseUrl: url })
      try {
        await race(engine)
      } finally {
        await engine.dispose()
      }
    }, 60_000)

    it("two engine processes on one database: exactly 10 succeed between them", async () => {
      const [portA, portB] = [await freePort(), await freePort()]
      const a = serve(portA, url, 11)
      try {
        await a.ready()
        // B starts once A has migrated the database
        const b = serve(portB, url, 12)
        try {
          await b.ready()
          const partner = (await http(portA, "POST", "/_sim/partners", { authorization: `Bearer ${ADMIN}` }, { businessName: "Two Procs", email: "t@p.test" }))
            .body
          const key = { "x-api-key": partner.sandboxKey as string }
          let n = 0
          const post = (port: number, path: string, body: unknown) =>
            http(port, "POST", `/api/sandbox/v1/partner${path}`, { ...key, "idempotency-key": `two-procs-${++n}` }, body)
          const user = (await post(portA, "/users", { externalId: "shared" })).body.subAccountId as string
          expect((await post(portB, `/users/${user}/deposit`, { amount: 100 })).status).toBe(200)
          const replies = await Promise.all(Array.from({ length: 40 }, (_, i) => post(i % 2 === 0 ? portA : portB, `/users/${user}/withdraw`, { amount: 10 })))
          expect(tally(replies.map((r) => ({ status: r.status, code: r.body?.error?.code })))).toEqual({ ok: 10, short: 30 })
          // both processes read the same final state
          for (const port of [portA, portB]) {
            expect((await http(port, "GET", `/api/sandbox/v1/partner/users/${user}`, key)).body.walletBalance).toBe(0)
            expect((await http(port, "GET", "/api/sandbox/v1/partner/wallet", key)).body.balance).toBe(100000)
          }
          const txs = (await http(portB, "GET", `/api/sandbox/v1/partner/users/${user}/transactions?limit=200`, key)).body
          expect(txs.transactions.filter((t: { type: string }) => t.type === "WITHDRAWAL")).toHaveLength(10)
          expect(txs.transactions.map((t: { balanceAfter: number }) => t.balanceAfter).sort((x: number, y: number) => x - y)).toEqual([
            0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100
          ])
        } finally {
          await b.stop()
        }
      } finally {
        await a.stop()
      }
    }, 120_000)
  })
})

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const probe = createServer()
    probe.once("error", reject)
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address()
      probe.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0))
    })
  })

/** One request to a served engine; the answer is checked against the contract like the harness's. */
const http = async (port: number, method: string, path: string, headers: Record<string, string>, body?: unknown) => {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: { "content-type": "application/json", ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  const reply = { status: response.status, headers: response.headers, body: text === "" ? null : JSON.parse(text) }
  const problems = contractProblems(method, path, headers, reply)
  if (problems.length > 0) throw new Error(`response breaks the contract:\n  ${problems.join("\n  ")}`)
  return reply
}

/** `sokoni serve` on postgres in a child process (this test's own; stopped by its pid with SIGTERM). */
const serve = (port: number, databaseUrl: string, seed: number) => {
  const child = spawn(
    process.execPath,
    [
      BIN,
      "serve",
      "--port",
      String(port),
      "--store",
      "postgres",
      "--database-url",
      databaseUrl,
      "--clock",
      "manual",
      "--start",
      "2026-11-23T08:00:00.000Z",
      "--seed",
      String(seed),
      "--admin-token",
      ADMIN,
      "--desk",
      "manual"
    ],
    { cwd: ROOT, env: { ...process.env }, stdio: ["ignore", "pipe", "pipe"] }
  )
  let output = ""
  child.stdout?.on("data", (c: Buffer) => {
    output += c.toString("utf8")
  })
  child.stderr?.on("data", (c: Buffer) => {
    output += c.toString("utf8")
  })
  const exited = new Promise<void>((resolve) => child.on("close", () => resolve()))
  return {
    ready: async () => {
      const until = Date.now() + 30_000
      while (!output.includes("ready in")) {
        if (child.exitCode !== null || Date.now() > until) throw new Error(`serve did not start:\n${output}`)
        await new Promise((r) => setTimeout(r, 25))
      }
    },
    stop: async () => {
      if (child.exitCode === null) child.kill("SIGTERM")
      await exited
    }
  }
}
