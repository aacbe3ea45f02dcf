/**
 * `POST /_sim/reset` (D-351, E-242): the engine behind `serve` starts over from nothing: partners, keys, wallets, events,
 * trace, maintenance, receiver scripts gone; the seeded generators from the start again (the first partner gets the
 * same id as the old world's first); the clock at `at` (default the engine's start, earlier instants allowed); the
 * admin token kept; open streams closed; on PostgreSQL the tables emptied, so a restart on the same database finds
 * nothing of the old world. An in-process engine refuses it (409); bad input answers in the envelope.
 */
import { describe, expect, it } from "vitest"
import { type RunningServer, startServer } from "../../engine/http/node-server.ts"
import { CONTROL_MOUNTS, CONTROL_PATH, makeValidator } from "../../spec/validator.ts"
import { startEngine } from "./harness.ts"
import { adminUrl, config, portOf, withDatabase } from "./node-server-kit.ts"
import { onPostgres } from "../support/stores.ts"

const control = makeValidator(CONTROL_PATH, CONTROL_MOUNTS)
const SANDBOX = "/api/sandbox/v1/partner"
const START = "2026-11-23T08:00:00.000Z"

/** Calls the server; every control answer is checked against spec/control.yaml. */
const client = (server: RunningServer) => {
  const base = `http://127.0.0.1:${portOf(server)}`
  const call = async (method: string, path: string, headers: Record<string, string>, body?: unknown) => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { "content-type": "application/json", ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    const text = await response.text()
    let parsed: any = text
    try {
      parsed = text === "" ? null : JSON.parse(text)
    } catch {
      // the ndjson trace
    }
    if (path.startsWith("/_sim/")) {
      const problems = control.check({ method, url: path, status: response.status, headers: response.headers, body: parsed })
      if (problems.length > 0) throw new Error(`control contract: ${problems.join("; ")}`)
    }
    return { status: response.status, body: parsed }
  }
  const admin = (method: string, path: string, body?: unknown) => call(method, path, { authorization: "Bearer t" }, body)
  const partner = async () => {
    const made = await admin("POST", "/_sim/partners", { businessName: "Reset Partner", email: "reset@p.test" })
    expect(made.status).toBe(201)
    return made.body as { partnerId: string; sandboxKey: string }
  }
  return { base, call, admin, partner }
}

/** Leaves a world with state everywhere reset must clear; returns the first partner. */
const populate = async (c: ReturnType<typeof client>) => {
  const p = await c.partner()
  expect((await c.admin("POST", `/_sim/partners/${p.partnerId}/wallet/credit`, { environment: "sandbox", amount: 25 })).status).toBe(200)
  expect((await c.admin("PUT", "/_sim/receivers", { url: "https://hooks.reset.test/x", partnerId: p.partnerId })).status).toBe(200)
  expect((await c.admin("PUT", "/_sim/maintenance", { mode: "read_only" })).status).toBe(200)
  expect((await c.admin("POST", "/_sim/clock/advance", { seconds: 3600 })).status).toBe(200)
  return p
}

/** What must hold right after a reset to `at` with the engine's own seed. */
const expectFresh = async (c: ReturnType<typeof client>, old: { partnerId: string; sandboxKey: string }, at: string) => {
  expect((await c.admin("GET", "/_sim/clock")).body).toEqual({ now: at, mode: "manual" })
  const refused = await c.call("GET", `${SANDBOX}/wallet`, { "x-api-key": old.sandboxKey })
  expect([refused.status, refused.body.error.code]).toEqual([401, "AUTH_INVALID"])
  expect((await c.admin("GET", "/_sim/maintenance")).body.mode).toBe("off")
  expect((await c.admin("GET", "/_sim/trace")).body).not.toContain(old.partnerId)
  // The seeded ids start over: the new world's first partner is the old world's first, with a fresh wallet.
  const again = await c.partner()
  expect(again.partnerId).toBe(old.partnerId)
  const wallet = await c.call("GET", `${SANDBOX}/wallet`, { "x-api-key": again.sandboxKey })
  expect([wallet.status, wallet.body.balance]).toEqual([200, 100_000])
  // The receiver script went with the old world: nothing was scripted for this URL any more.
  const take = await c.admin("POST", "/_sim/receivers/take", {})
  expect(take.body).toEqual({ received: [] })
}

describe("POST /_sim/reset", () => {
  it("starts the world over at `at` (earlier than now), the admin token kept", async () => {
    const server = await startServer(config, 0)
    try {
      const c = client(server)
      const old = await populate(c)
      const reset = await c.admin("POST", "/_sim/reset", { at: "2026-11-20T10:00:00.000Z" })
      expect([reset.status, reset.body]).toEqual([200, { now: "2026-11-20T10:00:00.000Z", seed: 1, mode: "manual" }])
      await expectFresh(c, old, "2026-11-20T10:00:00.000Z")
    } finally {
      await server.stop()
    }
  })

  it("defaults to the engine's start and seed; another seed draws other ids", async () => {
    const server = await startServer(config, 0)
    try {
      const c = client(server)
      const first = await c.partner()
      await c.admin("POST", "/_sim/clock/advance", { seconds: 60 })
      expect((await c.admin("POST", "/_sim/reset")).body).toEqual({ now: START, seed: 1, mode: "manual" })
      expect((await c.partner()).partnerId).toBe(first.partnerId)
      expect((await c.admin("POST", "/_sim/reset", { seed: 2 })).body).toEqual({ now: START, seed: 2, mode: "manual" })
      expect((await c.partner()).partnerId).not.toBe(first.partnerId)
    } finally {
      await server.stop()
    }
  })

  it("closes the old world's open event streams", async () => {
    const server = await startServer(config, 0)
    try {
      const c = client(server)
      const p = await c.partner()
      const stream = await fetch(`${c.base}${SANDBOX}/stream`, { headers: { "x-api-key": p.sandboxKey } })
      expect(stream.status).toBe(200)
      const reader = stream.body?.getReader()
      expect((await reader?.read())?.done).toBe(false)
      expect((await c.admin("POST", "/_sim/reset", {})).status).toBe(200)
      // The stream ends instead of hanging on a world that is gone.
      let done = false
      while (!done) done = (await reader?.read())?.done ?? true
      expect(done).toBe(true)
    } finally {
      await server.stop()
    }
  })

  it("refuses bad input in the envelope, needs the admin token, and is refused by an in-process engine", async () => {
    const server = await startServer(config, 0)
    try {
      const c = client(server)
      for (const [body, code] of [
        [{ at: "yesterday" }, "VALIDATION_ERROR"],
        [{ seed: -1 }, "VALIDATION_ERROR"],
        [{ at: 5 }, "INVALID_TYPE"]
      ] as const) {
        const r = await c.admin("POST", "/_sim/reset", body)
        expect([r.status, r.body.error.code], JSON.stringify(body)).toEqual([400, code])
      }
      const notADate = await c.admin("POST", "/_sim/reset", { at: "yesterday" })
      expect(notADate.body.error).toEqual({
        code: "VALIDATION_ERROR",
        message: 'at must be a date-time with a time zone (RFC 3339, e.g. 2026-01-05T09:30:00Z), got "yesterday"',
        param: "at"
      })
      const none = await c.call("POST", "/_sim/reset", {}, {})
      expect([none.status, none.body.error.code]).toEqual([401, "AUTH_MISSING"])
      // Nothing was reset by the refusals: the clock is where it was.
      expect((await c.admin("GET", "/_sim/clock")).body.now).toBe(START)
    } finally {
      await server.stop()
    }
    const inProcess = startEngine()
    try {
      const r = await inProcess.admin("POST", "/_sim/reset", {})
      expect([r.status, r.body.error.code]).toEqual([409, "CONFLICT"])
    } finally {
      await inProcess.dispose()
    }
  })
})

describe("POST /_sim/reset on a system clock", () => {
  it("refuses `at` (409 CONFLICT: the new world starts at the real time) and starts over without it", async () => {
    const server = await startServer({ ...config, clock: "system" }, 0)
    try {
      const c = client(server)
      const first = await c.partner()
      const withAt = await c.admin("POST", "/_sim/reset", { at: START })
      expect([withAt.status, withAt.body.error]).toEqual([
        409,
        { code: "CONFLICT", message: "the clock is in system mode: a new world starts at the real time, without `at`" }
      ])
      // Refused before anything was scheduled: the old world and its partner are still there.
      expect((await c.call("GET", `${SANDBOX}/wallet`, { "x-api-key": first.sandboxKey })).status).toBe(200)
      const without = await c.admin("POST", "/_sim/reset", { seed: 2 })
      expect([without.status, without.body.seed, without.body.mode]).toEqual([200, 2, "system"])
      const gone = await c.call("GET", `${SANDBOX}/wallet`, { "x-api-key": first.sandboxKey })
      expect([gone.status, gone.body.error.code]).toEqual([401, "AUTH_INVALID"])
    } finally {
      await server.stop()
    }
  })
})

describe.skipIf(adminUrl === undefined)(
  adminUrl === undefined ? "POST /_sim/reset on postgres (skipped: set DATABASE_URL)" : "POST /_sim/reset on postgres",
  onPostgres,
  () => {
    it("empties the tables: the new world holds nothing of the old, and neither does a restart on the same database", async () => {
      await withDatabase(adminUrl ?? "", async (url) => {
        const pg = { ...config, store: "postgres", databaseUrl: url } as const
        const server = await startServer(pg, 0)
        let old: { partnerId: string; sandboxKey: string }
        try {
          const c = client(server)
          old = await populate(c)
          expect((await c.admin("POST", "/_sim/reset", { at: "2026-11-20T10:00:00.000Z" })).status).toBe(200)
          await expectFresh(c, old, "2026-11-20T10:00:00.000Z")
        } finally {
          await server.stop()
        }
        // Restarted on the same database: the old world's key is unknown (its rows are gone, not merely unseen).
        const restarted = await startServer(pg, 0)
        try {
          const refused = await client(restarted).call("GET", `${SANDBOX}/wallet`, { "x-api-key": old.sandboxKey })
          // The new world's first partner has the old one's key (same seed): its wallet has no trace of the old world's
          // 25.00 credit.
          expect([refused.status, refused.body.balance]).toEqual([200, 100_000])
        } finally {
          await restarted.stop()
        }
      })
    })
  }
)
