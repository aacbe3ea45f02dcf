/**
 * What a report request is refused for and what a report holds (engine/domain/reports/, engine/app/reports/; the life cycle, QUEUED to
 * READY or FAILED, is tested in reports-invoices.test.ts), on the manual clock: the message of each period refusal and
 * the period's edges that are taken (exactly 366 days; `from` today at today's first millisecond); the 404 of an
 * unknown report naming it; the period's bounds at the millisecond (a row at 00:00:00.000 of `from` or at
 * 23:59:59.999 of `to` is in, one a millisecond outside is not) for transactions and sub-accounts, and another day's
 * orders being out; a report's restriction to one sub-account for every type; the columns and rows of SUB_ACCOUNTS,
 * TRANSACTIONS, STATEMENT and FEES; sub-accounts and orders oldest first (also on postgres when DATABASE_URL is set,
 * where a store list not asked for "asc" comes newest first); transactions of every sub-account by time, then by id;
 * an address read before it expires keeping its expiry, and that address's signature (id, expiry in seconds, digest of
 * the file); a FAILED PDF's recorded reason; and a report.generate step falling due again for a report that already
 * moved on leaving it as it is.
 */
import { createHash } from "node:crypto"
import { Effect } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { REPORT_JOB } from "../../engine/domain/reports/decide-report.ts"
import { EngineClock } from "../../engine/sim/clock.ts"
import { Scheduler } from "../../engine/sim/scheduler.ts"
import { Store } from "../../engine/store/port.ts"
import { partnerOf, storeDocs, tradingAccount } from "./accounts-kit.ts"
import { engineOn, MONDAY_OPEN } from "./harness.ts"
import { tagsFor } from "../support/stores.ts"

const disposers: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const dispose of disposers.splice(0)) await dispose()
})
/** Postgres runs only with DATABASE_URL: there a list without `order: "asc"` is newest first. */
const stores = process.env.DATABASE_URL === undefined ? (["memory"] as const) : (["memory", "postgres"] as const)

const at = (ms: number) => new Date(ms).toISOString()
/** The last millisecond of Monday 2026-11-23 and the first of Tuesday: the edges of a one-day period. */
const MONDAY_LAST_MS = "2026-11-23T23:59:59.999Z"
const TUESDAY_FIRST_MS = "2026-11-24T00:00:00.000Z"

const setup = async (store: "memory" | "postgres" = "memory") => {
  const { engine, dispose } = await engineOn(store)
  disposers.push(dispose)
  const p = await partnerOf(engine)
  const advance = async (seconds: number) => expect((await engine.admin("POST", "/_sim/clock/advance", { seconds })).status).toBe(200)
  const advanceTo = async (iso: string) => expect((await engine.admin("POST", "/_sim/clock/advance", { to: iso })).status).toBe(200)
  const doc = async (reportId: string) => {
    const docs = await storeDocs(engine, "reports", p.partition("sandbox"))
    return docs.find((d) => d.id === reportId)?.body as { content: string | null; rowCount: number | null; failureReason: string | null }
  }
  /** Requests a report, lets it become READY (30 s) and answers its file. */
  const generate = async (body: Record<string, unknown>) => {
    const r = await p.sb("POST", "/reports", body)
    expect(r.status, JSON.stringify(r.body)).toBe(202)
    await advance(30)
    expect((await p.sb("GET", `/reports/${r.body.reportId}`)).body.status).toBe("READY")
    return { reportId: r.body.reportId as string, content: (await doc(r.body.reportId)).content ?? "" }
  }
  /** The CSV file split into its header line and its cells (no cell of these reports holds a comma or a quote). */
  const csv = async (body: Record<string, unknown>) => {
    const lines = (await generate({ ...body, format: "CSV" })).content.split("\r\n")
    expect(lines.pop()).toBe("")
    return { header: lines[0], rows: lines.slice(1).map((l) => l.split(",")) }
  }
  const json = async (body: Record<string, unknown>) => JSON.parse((await generate({ ...body, format: "JSON" })).content) as Array<Record<string, unknown>>
  return { engine, p, advance, advanceTo, doc, generate, csv, json }
}

describe("the period of a request", () => {
  it("says what is wrong with it, naming the field", async () => {
    const s = await setup()
    const cases: Array<[Record<string, string>, string, string]> = [
      [{ from: "2026-02-30", to: "2026-03-01" }, "from", 'from must be a date on the calendar (YYYY-MM-DD), got "2026-02-30"'],
      [{ from: "2026-11-01", to: "2026-02-30" }, "to", 'to must be a date on the calendar (YYYY-MM-DD), got "2026-02-30"'],
      [{ from: "2026-11-02", to: "2026-11-01" }, "from", "from must not be after to"],
      [{ from: "2025-01-01", to: "2026-01-03" }, "to", "to must be at most 366 days after from"],
      [{ from: "2026-12-01", to: "2026-12-02" }, "from", "from must not be in the future"]
    ]
    for (const [period, param, message] of cases) {
      const r = await s.p.sb("POST", "/reports", { type: "TRADES", ...period })
      expect([r.status, r.body.error]).toEqual([400, { code: "VALIDATION_ERROR", message, param }])
    }
  })
})

describe("the period's edges", () => {
  it("a period of exactly 366 days is taken; from today is taken at today's first millisecond", async () => {
    const s = await setup()
    // 2025-01-01 + 366 days is 2026-01-02
    const longest = await s.p.sb("POST", "/reports", { type: "TRADES", from: "2025-01-01", to: "2026-01-02" })
    expect(longest.status, JSON.stringify(longest.body)).toBe(202)
    await s.advanceTo(TUESDAY_FIRST_MS)
    const today = await s.p.sb("POST", "/reports", { type: "TRADES", from: "2026-11-24", to: "2026-11-24" })
    expect(today.status, JSON.stringify(today.body)).toBe(202)
  })
})

describe("GET /reports/{reportId} of an unknown report", () => {
  it("is a 404 naming the report", async () => {
    const s = await setup()
    const r = await s.p.sb("GET", "/reports/rpt_nope")
    expect([r.status, r.body.error]).toEqual([404, { code: "NOT_FOUND", message: "report rpt_nope was not found" }])
  })
})

describe("SUB_ACCOUNTS", () => {
  for (const store of stores)
    it(`lists the sub-accounts created by the last millisecond of \`to\`, oldest first, with their columns (${store})`, tagsFor(store), async () => {
      const s = await setup(store)
      const a = await s.p.createUser("sandbox", { externalId: "sa-a" })
      await s.p.verify(a.subAccountId)
      await s.advanceTo(MONDAY_LAST_MS)
      const b = await s.p.createUser("sandbox", { externalId: "sa-b" })
      // created a millisecond after the period: not listed
      await s.advanceTo(TUESDAY_FIRST_MS)
      await s.p.createUser("sandbox", { externalId: "sa-c" })
      const file = await s.csv({ type: "SUB_ACCOUNTS", from: "2026-11-23", to: "2026-11-23" })
      expect(file.header).toBe("subAccountId,externalId,status,kycStatus,kycLevel,createdAt")
      expect(file.rows).toEqual([
        [a.subAccountId, "sa-a", "active", "VERIFIED", "BASIC", at(MONDAY_OPEN)],
        [b.subAccountId, "sa-b", "active", "NONE", "NONE", MONDAY_LAST_MS]
      ])
    })

  it("restricted to one sub-account, lists that one only", async () => {
    const s = await setup()
    await s.p.createUser("sandbox", { externalId: "sa-a" })
    const b = await s.p.createUser("sandbox", { externalId: "sa-b" })
    await s.p.createUser("sandbox", { externalId: "sa-c" })
    const rows = await s.json({ type: "SUB_ACCOUNTS", from: "2026-11-23", to: "2026-11-23", subAccountId: b.subAccountId })
    expect(rows).toEqual([
      { subAccountId: b.subAccountId, externalId: "sa-b", status: "active", kycStatus: "NONE", kycLevel: "NONE", createdAt: at(MONDAY_OPEN) }
    ])
  })
})

describe("TRANSACTIONS and STATEMENT", () => {
  /**
   * Two funded sub-accounts (both first deposits at 08:00:00.000), then deposits at +1 s (b), +2 s (a), on the last
   * millisecond of Monday (a) and the first of Tuesday (a).
   */
  const ledger = async () => {
    const s = await setup()
    const a = await tradingAccount(s.p, "tx-a", 100)
    const b = await tradingAccount(s.p, "tx-b", 200)
    await s.advance(1)
    await s.p.deposit(b.id, 7)
    await s.advance(1)
    await s.p.deposit(a.id, 9)
    await s.advanceTo(MONDAY_LAST_MS)
    await s.p.deposit(a.id, 11)
    await s.advanceTo(TUESDAY_FIRST_MS)
    await s.p.deposit(a.id, 13)
    const idOf = async (account: string, amount: number) => {
      const list = (await s.p.sb("GET", `/users/${account}/transactions`)).body.transactions as Array<{ transactionId: string; amount: number }>
      const found = list.find((t) => t.amount === amount)
      if (found === undefined) throw new Error(`no transaction of ${amount} on ${account}`)
      return found.transactionId
    }
    /**
     * Monday's rows, as a report must list them: by time, then in the order the ledger posted them (the master
     * wallet's seed, then each deposit's two sides, the master's first), with the master wallet's own rows (D-261).
     */
    const monday = async () => {
      const deposit = async (ms: number, account: string, amount: number, balanceAfter: number, masterAfter: number) => {
        const transactionId = await idOf(account, amount)
        const side = { at: at(ms), transactionId, type: "DEPOSIT", orderId: null, description: "Deposit from the master wallet" }
        return [
          { ...side, account: "master", amount: -amount, balanceAfter: masterAfter },
          { ...side, account, amount, balanceAfter }
        ].map(({ at, account, transactionId, type, amount, balanceAfter, orderId, description }) => ({
          at,
          account,
          transactionId,
          type,
          amount,
          balanceAfter,
          orderId,
          description
        }))
      }
      const seed = {
        at: at(MONDAY_OPEN),
        account: "master",
        transactionId: expect.stringMatching(/^txn_/),
        type: "ADJUSTMENT",
        amount: 100_000,
        balanceAfter: 100_000,
        orderId: null,
        description: "Virtual funds seeded"
      }
      return [
        seed,
        ...(await deposit(MONDAY_OPEN, a.id, 100, 100, 99_900)),
        ...(await deposit(MONDAY_OPEN, b.id, 200, 200, 99_700)),
        ...(await deposit(MONDAY_OPEN + 1000, b.id, 7, 207, 99_693)),
        ...(await deposit(MONDAY_OPEN + 2000, a.id, 9, 109, 99_684)),
        // on the last millisecond of `to`: in (Tuesday's first millisecond is out)
        ...(await deposit(Date.parse(MONDAY_LAST_MS), a.id, 11, 120, 99_673))
      ]
    }
    return { ...s, a: a.id, b: b.id, idOf, monday }
  }

  it("lists the master wallet's and every sub-account's transactions of the period by time, then in posting order, with their columns", async () => {
    const s = await ledger()
    const file = await s.csv({ type: "TRANSACTIONS", from: "2026-11-23", to: "2026-11-23" })
    expect(file.header).toBe("at,account,transactionId,type,amount,balanceAfter,orderId,description")
    expect(file.rows).toEqual(
      (await s.monday()).map((r) => [r.at, r.account, r.transactionId, r.type, String(r.amount), String(r.balanceAfter), "", r.description])
    )
  })

  it("a STATEMENT has the same rows; a period starts at 00:00:00.000 of `from`", async () => {
    const s = await ledger()
    const statement = await s.json({ type: "STATEMENT", from: "2026-11-23", to: "2026-11-23" })
    expect(statement).toEqual(await s.monday())
    expect(Object.keys(statement[0] ?? {})).toEqual(["at", "account", "transactionId", "type", "amount", "balanceAfter", "orderId", "description"])
    // Tuesday: only the deposit of its first millisecond, not Monday's last one
    const tuesday = await s.json({ type: "TRANSACTIONS", from: "2026-11-24", to: "2026-11-24" })
    expect(tuesday.map((r) => [r.at, r.account, r.amount])).toEqual([
      [TUESDAY_FIRST_MS, "master", -13],
      [TUESDAY_FIRST_MS, s.a, 13]
    ])
  })

  it("restricted to one sub-account, lists that one's transactions only", async () => {
    const s = await ledger()
    const rows = await s.json({ type: "TRANSACTIONS", from: "2026-11-23", to: "2026-11-24", subAccountId: s.b })
    expect(rows.map((r) => [r.account, r.amount, r.balanceAfter])).toEqual([
      [s.b, 200, 200],
      [s.b, 7, 207]
    ])
  })
})

describe("TRADES and FEES", () => {
  /** Sub-accounts a and b trade on Monday (a first); a trades again on Tuesday; the reports are asked on Tuesday. */
  const trades = async (store: "memory" | "postgres" = "memory") => {
    const s = await setup(store)
    const a = await tradingAccount(s.p, "tr-a", 500)
    const b = await tradingAccount(s.p, "tr-b", 500)
    const a1 = await a.trade("BUY", 10)
    await s.advance(1)
    const b1 = await b.trade("BUY", 5)
    await s.advanceTo("2026-11-24T08:00:00.000Z")
    const a2 = await a.trade("BUY", 3)
    return { ...s, a: a.id, b: b.id, a1: a1.orderId as string, b1: b1.orderId as string, a2: a2.orderId as string, placed: [a1, b1] }
  }

  for (const store of stores)
    it(`TRADES lists the orders created in the period, oldest first, and only the named sub-account's when restricted (${store})`, tagsFor(store), async () => {
      const s = await trades(store)
      const all = await s.json({ type: "TRADES", from: "2026-11-23", to: "2026-11-23" })
      expect(all.map((r) => [r.orderId, r.account])).toEqual([
        [s.a1, s.a],
        [s.b1, s.b]
      ])
      const onlyA = await s.json({ type: "TRADES", from: "2026-11-23", to: "2026-11-24", subAccountId: s.a })
      expect(onlyA.map((r) => [r.orderId, r.account])).toEqual([
        [s.a1, s.a],
        [s.a2, s.a]
      ])
    })

  it("FEES lists each order's base fee, partner markup and fee", async () => {
    const s = await trades()
    const file = await s.csv({ type: "FEES", from: "2026-11-23", to: "2026-11-23" })
    expect(file.header).toBe("orderId,account,createdAt,status,baseFee,partnerMarkupFee,fee")
    // each as the placement answered it (the desk fills nothing here: still PENDING)
    const [a1, b1] = s.placed.map((o) => [o.orderId, o.createdAt, o.status, String(o.baseFee), String(o.partnerMarkupFee), String(o.fee)])
    expect(file.rows).toEqual([
      [a1?.[0], s.a, ...(a1 ?? []).slice(1)],
      [b1?.[0], s.b, ...(b1 ?? []).slice(1)]
    ])
    expect(Number(file.rows[0]?.[6])).toBeGreaterThan(0)
  })
})

describe("the download address", () => {
  it("keeps its expiry (completion + 1 h) while valid, and is signed over the id, the expiry in seconds and the file's digest", async () => {
    const s = await setup()
    await tradingAccount(s.p, "dl-a", 100)
    const { reportId, content } = await s.generate({ type: "TRANSACTIONS", format: "JSON", from: "2026-11-23", to: "2026-11-23" })
    await s.advance(600)
    const r = (await s.p.sb("GET", `/reports/${reportId}`)).body
    const expiresAt = MONDAY_OPEN + 30_000 + 3_600_000
    expect(r.downloadExpiresAt).toBe(at(expiresAt))
    const expires = Math.floor(expiresAt / 1000)
    const digest = createHash("sha256").update(content).digest("hex")
    const sig = createHash("sha256").update(`${reportId}|${expires}|${digest}`).digest("hex").slice(0, 32)
    expect(r.downloadUrl).toBe(`https://files.sokoni.test/reports/${reportId}.json?expires=${expires}&sig=${sig}`)
  })
})

describe("the report.generate job", () => {
  it("records why a PDF report FAILED", async () => {
    const s = await setup()
    const r = await s.p.sb("POST", "/reports", { type: "TRADES", format: "PDF", from: "2026-11-23", to: "2026-11-23" })
    await s.advance(30)
    expect((await s.doc(r.body.reportId)).failureReason).toBe("PDF rendering is not simulated (D-262)")
  })

  // A job for a report that already moved on (a stale or repeated one) must leave it alone: scheduled here by hand.
  it("leaves a READY report as it is when a GENERATING or DONE step falls due again", async () => {
    const s = await setup()
    await tradingAccount(s.p, "job-a", 100)
    const { reportId } = await s.generate({ type: "TRANSACTIONS", from: "2026-11-23", to: "2026-11-23" })
    const ready = (await s.p.sb("GET", `/reports/${reportId}`)).body
    const runAgain = async (step: string) => {
      await s.advance(60)
      await s.engine.runtime.runPromise(
        Effect.gen(function* () {
          const store = yield* Store
          const scheduler = yield* Scheduler
          const now = yield* (yield* EngineClock).now
          yield* store.transact((tx) => scheduler.schedule(tx, REPORT_JOB, now, { reportId, step }))
        })
      )
      await s.advance(1)
      const again = (await s.p.sb("GET", `/reports/${reportId}`)).body
      expect([again.status, again.completedAt, again.downloadUrl]).toEqual(["READY", ready.completedAt, ready.downloadUrl])
    }
    await runAgain("GENERATING")
    await runAgain("DONE")
  })
})
