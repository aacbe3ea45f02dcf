/**
 * Listings (E-181): a status set in a transaction is what an order reads inside later transactions; this process's
 * copy follows only once the transaction commits (and bumps the version caches key on); a process started afterwards
 * loads the committed statuses. On the memory store, and on PostgreSQL when DATABASE_URL is set.
 */
import { Effect, Exit, Layer, Scope } from "effect"
import { describe, expect, it } from "vitest"
import { Listings } from "../../engine/app/listings.ts"
import { INSTRUMENTS, type Instrument } from "../../engine/domain/instruments.ts"
import { MemoryStoreLayer } from "../../engine/store/memory.ts"
import { withTemporaryDatabase } from "../../engine/store/pg-temp-db.ts"
import { PostgresStoreLayer } from "../../engine/store/postgres.ts"
import { Store } from "../../engine/store/port.ts"
import { onPostgres } from "../support/stores.ts"

const DATABASE_URL = process.env.DATABASE_URL
const listing = (id: string) => INSTRUMENTS.find((i) => i.id === id) as Instrument
const AT = Date.parse("2026-11-23T09:00:00.000Z")

const scenario = Effect.gen(function* () {
  const store = yield* Store
  const listings = yield* Listings
  const scom = listing("SCOM.KE")
  const eqty = listing("EQTY.KE")
  expect([listings.statusOf(scom), listings.current(scom)]).toEqual(["ACTIVE", scom])
  const before = listings.version()

  // A transaction that fails leaves this process's copy as it was.
  const aborted = yield* Effect.exit(
    store.transact((tx) => Effect.andThen(listings.setIn(tx, scom.id, "SUSPENDED", "ca_aborted", AT), Effect.fail("rolled back")))
  )
  expect(Exit.isFailure(aborted)).toBe(true)
  expect([listings.statusOf(scom), listings.version()]).toEqual(["ACTIVE", before])

  // Inside the transaction the store already answers SUSPENDED; this process's copy follows at the commit.
  const inside = yield* store.transact((tx) =>
    Effect.gen(function* () {
      yield* listings.setIn(tx, scom.id, "SUSPENDED", "ca_1", AT)
      return [yield* listings.statusIn(tx, scom), listings.statusOf(scom)]
    })
  )
  expect(inside).toEqual(["SUSPENDED", "ACTIVE"])
  expect(listings.statusOf(scom)).toBe("SUSPENDED")
  expect(listings.current(scom)).toEqual({ ...scom, listingStatus: "SUSPENDED" })
  expect(listings.version()).not.toBe(before)
  const afterSuspension = listings.version()
  yield* store.transact((tx) => listings.setIn(tx, eqty.id, "DELISTED", "ca_2", AT + 1))
  expect(new Set([before, afterSuspension, listings.version()]).size).toBe(3)
  expect(yield* store.read((tx) => listings.statusIn(tx, eqty))).toBe("DELISTED")
  // A listing no action touched keeps the catalogue's status, in the store and in the copy.
  const kcb = listing("KCB.KE")
  expect([yield* store.read((tx) => listings.statusIn(tx, kcb)), listings.statusOf(kcb), listings.current(kcb)]).toEqual(["ACTIVE", "ACTIVE", kcb])

  // A process started now loads what was committed.
  const later = yield* Listings.make
  expect([later.statusOf(scom), later.statusOf(eqty), later.statusOf(kcb)]).toEqual(["SUSPENDED", "DELISTED", "ACTIVE"])
  expect(later.current(eqty)).toEqual({ ...eqty, listingStatus: "DELISTED" })
})

describe("Listings", () => {
  it("follows committed statuses, and a process started later loads them (memory store)", async () => {
    await Effect.runPromise(scenario.pipe(Effect.provide(Layer.provideMerge(Listings.layer, MemoryStoreLayer))))
  })

  it.skipIf(DATABASE_URL === undefined)("the same on PostgreSQL (skipped: set DATABASE_URL)", { ...onPostgres, timeout: 60_000 }, async () => {
    const scope = Effect.runSync(Scope.make())
    try {
      const url = await Effect.runPromise(Scope.provide(withTemporaryDatabase(DATABASE_URL ?? ""), scope))
      await Effect.runPromise(scenario.pipe(Effect.provide(Layer.provideMerge(Listings.layer, PostgresStoreLayer(url)))))
    } finally {
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  })
})
