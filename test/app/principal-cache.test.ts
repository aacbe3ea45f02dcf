/**
 * The principal cache of PartnerService.authenticate (E-052): a key written in this engine is seen by the very next
 * request; a key written behind this engine's back (another engine process on the same database writes the row
 * without touching this process's memory) is seen within PRINCIPAL_TTL_MS of engine time, and not later. On postgres
 * the "other process" is a second runtime on the same database with its own clock and cache.
 */
import { Effect, Exit, Layer, ManagedRuntime, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ApiKeyDoc, ApiKeys } from "../../engine/app/docs.ts"
import { BoundedMap, boundedMemo, hashKey, PRINCIPAL_TTL_MS } from "../../engine/app/partners/credentials.ts"
import { PartnerService } from "../../engine/app/partners/service.ts"
import { EventLog } from "../../engine/events/event-log.ts"
import { EngineClock } from "../../engine/sim/clock.ts"
import { Entropy } from "../../engine/sim/random.ts"
import { Trace } from "../../engine/sim/trace.ts"
import { MemoryStoreLayer } from "../../engine/store/memory.ts"
import { withTemporaryDatabase } from "../../engine/store/pg-temp-db.ts"
import { Store } from "../../engine/store/port.ts"
import { MONDAY_OPEN, startEngine } from "../http/harness.ts"
import { onPostgres } from "../support/stores.ts"

type Engine = ReturnType<typeof startEngine>

const SANDBOX = "/api/sandbox/v1/partner"
const DATABASE_URL = process.env.DATABASE_URL

/** The status of GET /stocks with `key`, and the error code when refused: a revoked key is 403 AUTH_REVOKED. */
const stocks = async (engine: Engine, key: string) => {
  const r = await engine.call("GET", `${SANDBOX}/stocks?limit=1`, { headers: { "x-api-key": key } })
  return r.status === 200 ? 200 : `${r.status} ${r.body.error.code}`
}
const REVOKED = "403 AUTH_REVOKED"

const keyDoc = (engine: Engine, key: string) => engine.runtime.runPromise(Store.use((store) => store.read((tx) => ApiKeys.get(tx, hashKey(key)))))

/** What another engine process does: the row changes in the database, and nothing in this process hears of it. */
const revokeBehindTheBack = async (engine: Engine, key: string) => {
  const doc = await keyDoc(engine, key)
  if (doc._tag !== "Some") throw new Error("no key document")
  const revoked: ApiKeyDoc = { ...doc.value, status: "revoked" }
  await engine.runtime.runPromise(
    Store.use((store) => store.transact((tx) => tx.put("apiKeys", { id: revoked.keyHash, partition: "global", sortKey: `k${revoked.keyHash}`, body: revoked })))
  )
}

/** What this engine does when it changes a key: through the typed collection. */
const revokeHere = async (engine: Engine, key: string) => {
  const doc = await keyDoc(engine, key)
  if (doc._tag !== "Some") throw new Error("no key document")
  await engine.runtime.runPromise(
    Store.use((store) => store.transact((tx) => ApiKeys.put(tx, doc.value.keyHash, "global", `k${doc.value.keyHash}`, { ...doc.value, status: "revoked" })))
  )
}

const advanceMs = (engine: Engine, ms: number) => engine.admin("POST", "/_sim/clock/advance", { seconds: ms / 1000 })

describe("principal cache (memory)", () => {
  it("a key revoked through this engine is refused on the very next request", async () => {
    const engine = startEngine()
    try {
      const { sandboxKey } = await engine.newPartner()
      expect(await stocks(engine, sandboxKey)).toBe(200)
      await revokeHere(engine, sandboxKey)
      expect(await stocks(engine, sandboxKey)).toBe(REVOKED)
    } finally {
      await engine.dispose()
    }
  })

  it("a key revoked behind the engine's back is trusted until the TTL ends, and refused from then on", async () => {
    const engine = startEngine()
    try {
      const { sandboxKey } = await engine.newPartner()
      expect(await stocks(engine, sandboxKey)).toBe(200)
      await revokeBehindTheBack(engine, sandboxKey)
      expect(await stocks(engine, sandboxKey)).toBe(200)
      await advanceMs(engine, PRINCIPAL_TTL_MS - 1)
      expect(await stocks(engine, sandboxKey)).toBe(200)
      await advanceMs(engine, 1)
      expect(await stocks(engine, sandboxKey)).toBe(REVOKED)
    } finally {
      await engine.dispose()
    }
  })

  it("a partner suspended through this engine is refused on the very next request, its cached principal notwithstanding", async () => {
    const engine = startEngine()
    try {
      const { partnerId, sandboxKey } = await engine.newPartner()
      expect(await stocks(engine, sandboxKey)).toBe(200)
      expect((await engine.admin("POST", `/_sim/partners/${partnerId}/status`, { status: "suspended" })).status).toBe(200)
      expect(await stocks(engine, sandboxKey)).toBe("403 AUTH_SUSPENDED")
      expect((await engine.admin("POST", `/_sim/partners/${partnerId}/status`, { status: "active" })).status).toBe(200)
      expect(await stocks(engine, sandboxKey)).toBe(200)
    } finally {
      await engine.dispose()
    }
  })

  it("does not carry a principal across environments: a cached sandbox key is still refused on production", async () => {
    const engine = startEngine()
    try {
      const { sandboxKey } = await engine.newPartner()
      expect(await stocks(engine, sandboxKey)).toBe(200)
      const production = await engine.call("GET", "/api/v1/partner/stocks?limit=1", { headers: { "x-api-key": sandboxKey } })
      expect(production.status).toBe(401)
      expect(await engine.runtime.runPromise(Effect.flip(PartnerService.use((p) => p.authenticate(sandboxKey, "production"))))).toMatchObject({
        code: "AUTH_INVALID"
      })
    } finally {
      await engine.dispose()
    }
  })
})

/**
 * PartnerService alone on the memory store, with a clock the test sets to any instant, backwards too: in system mode
 * the engine's clock is the machine's, which can be stepped back (NTP, a VM restored).
 */
const serviceOnSteppedClock = () => {
  let now = MONDAY_OPEN
  const clock = Layer.succeed(
    EngineClock,
    EngineClock.of({ mode: "system", now: Effect.sync(() => now), nowHere: () => Effect.sync(() => now), moveTo: () => Effect.void })
  )
  const seams = Layer.mergeAll(MemoryStoreLayer, clock, Entropy.layer(1), Trace.layer)
  const runtime = ManagedRuntime.make(Layer.provideMerge(PartnerService.layer, Layer.provideMerge(EventLog.layer, seams)))
  const authenticate = (key: string) =>
    runtime.runPromise(
      PartnerService.use((p) => p.authenticate(key, "sandbox")).pipe(Effect.match({ onSuccess: () => "ok", onFailure: (e) => ("code" in e ? e.code : e._tag) }))
    )
  return {
    runtime,
    authenticate,
    setNow: (at: number) => {
      now = at
    }
  }
}

describe("principal cache and the clock", () => {
  it("a principal cached at a later instant than now (the clock stepped back) is not trusted: the key is read again", async () => {
    const { runtime, authenticate, setNow } = serviceOnSteppedClock()
    try {
      const { sandboxKey } = await runtime.runPromise(PartnerService.use((p) => p.bootstrap({ businessName: "Acme", email: "a@b.co", tier: "starter" })))
      setNow(MONDAY_OPEN + 10_000)
      expect(await authenticate(sandboxKey)).toBe("ok")
      const doc = await runtime.runPromise(Store.use((store) => store.read((tx) => ApiKeys.get(tx, hashKey(sandboxKey)))))
      if (doc._tag !== "Some") throw new Error("no key document")
      await runtime.runPromise(
        Store.use((store) =>
          store.transact((tx) => tx.put("apiKeys", { id: doc.value.keyHash, partition: "global", sortKey: "k", body: { ...doc.value, status: "revoked" } }))
        )
      )
      // At the instant it was cached the principal is still trusted (the store is not read)...
      expect(await authenticate(sandboxKey)).toBe("ok")
      // ...but not at an earlier one, however close: the revocation is seen.
      setNow(MONDAY_OPEN + 10_000 - 1)
      expect(await authenticate(sandboxKey)).toBe("AUTH_REVOKED")
    } finally {
      await runtime.dispose()
    }
  })
})

describe("the bounded memory of credentials", () => {
  it("a BoundedMap holds up to its bound, then starts afresh with the newest entry", () => {
    const map = new BoundedMap<string, number>(3)
    map.set("a", 1)
    map.set("b", 2)
    map.set("c", 3)
    expect([map.get("a"), map.get("b"), map.get("c")]).toEqual([1, 2, 3])
    map.set("d", 4)
    expect([map.get("a"), map.get("b"), map.get("c"), map.get("d")]).toEqual([undefined, undefined, undefined, 4])
  })

  it("a bounded memo computes each key once while it is remembered, and again once the bound forgot it", () => {
    const computed: Array<string> = []
    const upper = boundedMemo(2, (key) => {
      computed.push(key)
      return key.toUpperCase()
    })
    expect([upper("a"), upper("b"), upper("a"), upper("b")]).toEqual(["A", "B", "A", "B"])
    expect(computed).toEqual(["a", "b"])
    expect(upper("c")).toBe("C")
    expect(upper("a")).toBe("A")
    expect(computed).toEqual(["a", "b", "c", "a"])
  })

  it("hashKey is the SHA-256 of the key, in hex, the same every time", async () => {
    const { createHash } = await import("node:crypto")
    const expected = createHash("sha256").update("sk_sandbox_example").digest("hex")
    expect(hashKey("sk_sandbox_example")).toBe(expected)
    expect(hashKey("sk_sandbox_example")).toBe(expected)
  })
})

describe.skipIf(DATABASE_URL === undefined)("principal cache across two engines on one postgres (skipped: set DATABASE_URL)", onPostgres, () => {
  const scope = Effect.runSync(Scope.make())
  let url = ""
  beforeAll(async () => {
    url = await Effect.runPromise(Scope.provide(withTemporaryDatabase(DATABASE_URL ?? ""), scope))
  })
  afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))

  it("a key revoked by one engine is refused by the other once the TTL has passed on its clock", async () => {
    const a = startEngine({ store: "postgres", databaseUrl: url })
    await a.call("GET", "/api/v1/status")
    const b = startEngine({ store: "postgres", databaseUrl: url })
    try {
      const { sandboxKey } = await a.newPartner()
      expect(await stocks(a, sandboxKey)).toBe(200)
      expect(await stocks(b, sandboxKey)).toBe(200)
      // The generation is process-wide, and both runtimes live in this test's process: B writes the row as another
      // process would, without the bump, and reads it back (its own cache is as stale as A's until the TTL).
      await revokeBehindTheBack(b, sandboxKey)
      expect(await stocks(a, sandboxKey)).toBe(200)
      await advanceMs(b, PRINCIPAL_TTL_MS)
      expect(await stocks(b, sandboxKey)).toBe(REVOKED)
      expect(await stocks(a, sandboxKey)).toBe(200)
      await advanceMs(a, PRINCIPAL_TTL_MS)
      expect(await stocks(a, sandboxKey)).toBe(REVOKED)
    } finally {
      await b.dispose()
      await a.dispose()
    }
  }, 60_000)
})
