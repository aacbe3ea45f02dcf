/**
 * What the engine reads back from the store is checked against the shape the code takes it for (E-345, E-306): a
 * document of the collections checked since (sub-accounts, corporate actions and dividends, listings, audit records,
 * rights entitlements, usage hours, subscriptions, symbols, stream slots, a delivery's attempt history, holdings read
 * by account) that was edited into another shape fails its reader as a StoreError naming it, and a due job whose
 * payload is not its kind's goes to deadJobs, named, while the engine goes on answering and running the jobs after it.
 * On the memory store and, with DATABASE_URL, on PostgreSQL.
 */
import { Effect, Exit } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { AuditRecords } from "../../engine/app/audit.ts"
import { Deliveries, SimActions, SimDividends, SubAccounts } from "../../engine/app/docs.ts"
import { holdingsOf } from "../../engine/app/ledger.ts"
import { Listings } from "../../engine/app/listings.ts"
import { allottedAsBuys } from "../../engine/app/corporate-actions/rights.ts"
import { StreamSlots } from "../../engine/app/stream.ts"
import { pendingSubscriptionCount, Subscriptions } from "../../engine/app/subscription-docs.ts"
import { Symbols } from "../../engine/app/symbols.ts"
import { UsageHours } from "../../engine/app/billing/usage-meter.ts"
import { INSTRUMENTS, type Instrument } from "../../engine/domain/instruments.ts"
import { type ReadTx, Store, StoreError } from "../../engine/store/port.ts"
import { engineOn, MONDAY_OPEN, type startEngine } from "../http/harness.ts"
import { tagsFor } from "../support/stores.ts"

const DATABASE_URL = process.env.DATABASE_URL
const SCOM = INSTRUMENTS.find((i) => i.id === "SCOM.KE") as Instrument

type Engine = ReturnType<typeof startEngine>

/** Writes `body` as raw JSON, as a hand edit or an older engine would have. */
const putRaw = (engine: Engine, collection: string, doc: { id: string; partition: string; sortKey: string; body: unknown }) =>
  engine.runtime.runPromise(Store.use((store) => store.transact((tx) => tx.put(collection, doc))))

/** How a read ended: its value, or the message of the StoreError it failed with (anything else fails the test). */
const readWith = async <A>(engine: Engine, read: (tx: ReadTx) => Effect.Effect<A, StoreError, Listings | Symbols>) => {
  const exit = await engine.runtime.runPromiseExit(Store.use((store) => store.read(read)))
  if (Exit.isSuccess(exit)) return { value: exit.value }
  const error = exit.cause.reasons.find((r) => r._tag === "Fail")?.error
  if (!(error instanceof StoreError)) throw new Error(`expected a StoreError, got ${String(exit.cause)}`)
  return { error: error.message }
}

/** A delivery as the engine stores it, before its first attempt. */
const delivery = (partition: string) => ({
  deliveryId: "dlv_bad",
  webhookId: "wh_1",
  partition,
  eventId: "evt_1",
  event: "order.filled",
  position: 1,
  createdAt: MONDAY_OPEN,
  attempts: 0,
  state: "pending",
  statusCode: null,
  latencyMs: null,
  success: false,
  lastAttemptAt: null,
  nextAttemptAt: MONDAY_OPEN,
  nextJobSeq: 1
})

const shapeError = (collection: string, id: string) => `stored ${collection}/${id} does not have the shape of version 1`

for (const store of ["memory", "postgres"] as const) {
  describe.skipIf(store === "postgres" && DATABASE_URL === undefined)(`stored shapes (${store})`, { ...tagsFor(store), timeout: 60_000 }, () => {
    let engine: Engine
    let dispose: () => Promise<void>
    let partition: string
    let sandboxKey: string
    beforeEach(async () => {
      ;({ engine, dispose } = await engineOn(store))
      const partner = await engine.newPartner()
      partition = `${partner.partnerId}:sandbox`
      sandboxKey = partner.sandboxKey
    })
    afterEach(() => dispose())

    it("a document edited into another shape fails its reader as a StoreError naming it, in every collection checked", async () => {
      const cases: ReadonlyArray<{
        readonly collection: string
        readonly doc: { id: string; partition: string; sortKey: string; body: unknown }
        readonly read: (tx: ReadTx) => Effect.Effect<unknown, StoreError, Listings | Symbols>
      }> = [
        {
          collection: SubAccounts.name,
          doc: { id: "usr_bad", partition, sortKey: "1", body: { subAccountId: "usr_bad", partition, status: "FROZEN" } },
          read: (tx) => SubAccounts.listDocs(tx, { partition, limit: 10, order: "asc" })
        },
        {
          collection: SimActions.name,
          doc: { id: "ca_bad", partition: "global", sortKey: "1", body: { actionId: "ca_bad", actionType: "MERGER", details: {} } },
          read: (tx) => SimActions.list(tx, "global", { limit: 10, order: "asc" })
        },
        {
          collection: SimDividends.name,
          doc: { id: "dv_bad", partition: "global", sortKey: "1", body: { dividendId: "dv_bad", perShare: "0.5" } },
          read: (tx) => SimDividends.get(tx, "dv_bad")
        },
        {
          collection: "listings",
          doc: { id: SCOM.id, partition: "global", sortKey: SCOM.id, body: { symbol: SCOM.id, listingStatus: "HALTED" } },
          read: (tx) => Listings.use((listings) => listings.statusIn(tx, SCOM))
        },
        {
          collection: AuditRecords.name,
          doc: { id: "aud_bad", partition, sortKey: "999999999999999|aud_bad", body: { auditId: "aud_bad", action: 7 } },
          read: (tx) => AuditRecords.listDocs(tx, { partition, limit: 10, order: "desc" })
        },
        {
          collection: "rightsEntitlements",
          doc: { id: `ca_r|${partition}|master`, partition, sortKey: "ca_r|master", body: { actionId: "ca_r", account: "master", status: "ALLOTTED" } },
          read: (tx) => allottedAsBuys(tx, partition, "master")
        },
        {
          collection: UsageHours.name,
          doc: { id: `${partition}|0`, partition, sortKey: "000000000000000", body: { partition, hourStart: 0, requests: "12" } },
          read: (tx) => UsageHours.list(tx, partition, { limit: 10, order: "asc" })
        },
        {
          collection: Subscriptions.name,
          doc: { id: "sub_bad", partition: `${partition}/master`, sortKey: "1", body: { subscriptionId: "sub_bad", status: 3 } },
          read: (tx) => pendingSubscriptionCount(tx, partition, "master")
        },
        {
          collection: "symbols",
          doc: { id: SCOM.id, partition: "global", sortKey: SCOM.id, body: { listingId: SCOM.id, symbol: 5, formerSymbols: "SCOM.KE" } },
          read: (tx) => Symbols.use((symbols) => symbols.usedIn(tx, "SAFCOM.KE"))
        },
        {
          collection: StreamSlots.name,
          doc: { id: `${partition}#0`, partition, sortKey: `${partition}#0`, body: { holder: "stm_1", expiresAt: "soon" } },
          read: (tx) => StreamSlots.get(tx, `${partition}#0`)
        },
        {
          collection: Deliveries.name,
          doc: {
            id: "dlv_bad",
            partition: `${partition}|wh_1`,
            sortKey: "1",
            body: { ...delivery(partition), history: [{ attempt: 1, outcome: "exploded" }] }
          },
          read: (tx) => Deliveries.get(tx, "dlv_bad")
        },
        {
          collection: "holdings",
          doc: { id: `${partition}|master|SCOM.KE`, partition, sortKey: "master|SCOM.KE", body: { symbol: "SCOM.KE", quantity: 10 } },
          read: (tx) => holdingsOf(tx, partition, "master")
        }
      ]
      for (const c of cases) {
        expect(await readWith(engine, c.read), `${c.collection} before the edit`).toHaveProperty("value")
        await putRaw(engine, c.collection, c.doc)
        const outcome = await readWith(engine, c.read)
        expect(outcome.error, c.collection).toContain(shapeError(c.collection, c.doc.id))
      }
    })

    it("a request that reads a hand-edited document fails, and the log names the document", async () => {
      const report = { reportId: "rpt_bad", partition, type: "TRADES", format: "XLSX", status: "READY", createdAt: MONDAY_OPEN }
      await putRaw(engine, "reports", { id: "rpt_bad", partition, sortKey: "x", body: report })
      const { value: read, lines } = await engine.log.during(() =>
        engine.call("GET", "/api/sandbox/v1/partner/reports/rpt_bad", { headers: { "x-api-key": sandboxKey } })
      )
      expect(read.status).toBe(500)
      expect(lines.map((l) => l.text).join("\n")).toContain(shapeError("reports", "rpt_bad"))
    })

    it("a document that fits is read as stored, a field its shape does not name included", async () => {
      const listing = { symbol: SCOM.id, listingStatus: "SUSPENDED", actionId: "ca_1", updatedAt: MONDAY_OPEN, addedByNewerCode: [1] }
      await putRaw(engine, "listings", { id: SCOM.id, partition: "global", sortKey: SCOM.id, body: listing })
      const usage = { partition, hourStart: MONDAY_OPEN, requests: 3, errors: 1, rateLimited: 0, addedByNewerCode: "x" }
      await putRaw(engine, UsageHours.name, { id: `${partition}|${MONDAY_OPEN}`, partition, sortKey: "x", body: usage })
      const read = await readWith(engine, (tx) =>
        Effect.all([Listings.use((l) => l.statusIn(tx, SCOM)), UsageHours.list(tx, partition, { limit: 10, order: "asc" })])
      )
      expect(read.value).toEqual(["SUSPENDED", [usage]])
    })

    it("a job whose payload is not its kind's goes to deadJobs naming it; the engine answers and runs the jobs after it", async () => {
      const quote = await engine.call("GET", "/api/sandbox/v1/partner/quote/SCOM?side=BUY&quantity=1", { headers: { "x-api-key": sandboxKey } })
      expect(quote.status).toBe(200)
      const malformed = [
        { kind: "quote.expire", payload: { quoteId: 42 } },
        { kind: "desk.step", payload: { orderId: "ord_x", step: { action: "explode" } } },
        { kind: "webhook.attempt", payload: { deliveryId: "dlv_x" } },
        { kind: "price-alert.evaluate", payload: null }
      ]
      const seqs = await engine.runtime.runPromise(
        Store.use((s) =>
          s.transact((tx) => Effect.forEach(malformed, (job) => Effect.map(tx.scheduleJob({ ...job, dueAt: MONDAY_OPEN + 1_000 }), (j) => j.seq)))
        )
      )
      const { value: advanced, lines } = await engine.log.during(() => engine.admin("POST", "/_sim/clock/advance", { seconds: 61 }))
      expect(advanced.status).toBe(200)
      expect(lines.filter((l) => l.text.includes("moved to deadJobs"))).toHaveLength(malformed.length)
      // The quote's own expiry job, due after them, still ran.
      const expired = String((await engine.admin("GET", "/_sim/trace")).body)
        .split("\n")
        .filter((l) => l.includes('"event":"quote.expired"'))
        .map((l) => JSON.parse(l).data.quoteId)
      expect(expired).toEqual([quote.body.quoteId])
      const dead = await readWith(engine, (tx) => tx.list("deadJobs", { partition: "global", limit: 100, order: "asc" }))
      const errors = new Map((dead.value ?? []).map((d) => [d.id, String((d.body as { error: unknown }).error)]))
      malformed.forEach((job, i) => {
        expect(errors.get(String(seqs[i])), job.kind).toContain(`job ${seqs[i]} (${job.kind}) does not have the payload its handler takes`)
      })
      expect(errors.size).toBe(malformed.length)
    })
  })
}
