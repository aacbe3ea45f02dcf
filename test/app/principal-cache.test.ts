/**
 * The principal cache of PartnerService.authenticate (E-052): a key written in this engine is seen by the very next
 * request; a key written behind this engine's back (another engine process on the same database writes the row
 * without touching this process's memory) is seen within PRINCIPAL_TTL_MS of engine time, and not later. On postgres
 * the "other process" is a second runtime on the same database with its own clock and cache.
 */
import { Effect, Exit, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ApiKeyDoc, ApiKeys } from "../../engine/app/docs.ts"
import { hashKey, PartnerService, PRINCIPAL_TTL_MS } from "../../engine/app/partners.ts"
import { withTemporaryDatabase } from "../../engine/store/pg-temp-db.ts"
import { Store } from "../../engine/store/port.ts"
import { startEngine } from "../http/harness.ts"

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

describe.skipIf(DATABASE_URL === undefined)("principal cache across two engines on one postgres (skipped: set DATABASE_URL)", () => {
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
