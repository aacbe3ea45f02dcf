/**
 * Reports (D-062, D-261, D-262) and invoices (D-063, D-263), on both stores: a report is QUEUED, GENERATING after
 * 5 s and READY after 30 s on the engine clock, with the rows of the period kept as CSV or JSON (an absent cell written
 * empty) and an hour-long download address; PDF ends FAILED; invoices are derived per month from tier and production
 * usage. What a report holds, row by row, is tested in report-contents.test.ts. Every answer is checked against the
 * contract by the harness.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { invoiceFor } from "../../engine/domain/billing/invoice.ts"
import { render } from "../../engine/domain/reports/tables.ts"
import { partnerOf, storeDocs, tradingAccount } from "./accounts-kit.ts"
import { engineOn, MONDAY_OPEN, type startEngine } from "./harness.ts"
import { tagsFor } from "../support/stores.ts"

const DATABASE_URL = process.env.DATABASE_URL

const at = (ms: number) => new Date(ms).toISOString()

for (const store of ["memory", "postgres"] as const) {
  const skip = store === "postgres" && DATABASE_URL === undefined

  describe.skipIf(skip)(`reports (${store})`, tagsFor(store), () => {
    let engine: ReturnType<typeof startEngine>
    let dispose: () => Promise<void>
    let p: Awaited<ReturnType<typeof partnerOf>>
    beforeEach(async () => {
      ;({ engine, dispose } = await engineOn(store))
      p = await partnerOf(engine)
    })
    afterEach(() => dispose())

    const advance = (seconds: number) => engine.admin("POST", "/_sim/clock/advance", { seconds })
    const content = async (reportId: string) => {
      const docs = await storeDocs(engine, "reports", p.partition("sandbox"))
      return docs.find((d) => d.id === reportId)?.body as { content: string | null; rowCount: number | null }
    }

    it("goes QUEUED -> GENERATING -> READY on the engine clock, with the period's trades and an hour-long address", async () => {
      const account = await tradingAccount(p, "rpt-trader", 500)
      const order = await account.trade("BUY", 10)
      const r = await p.sb("POST", "/reports", { type: "TRADES", from: "2026-11-23", to: "2026-11-23" })
      expect(r.status).toBe(202)
      expect(r.body).toEqual({
        reportId: expect.stringMatching(/^rpt_/),
        type: "TRADES",
        format: "CSV",
        from: "2026-11-23",
        to: "2026-11-23",
        subAccountId: null,
        status: "QUEUED",
        downloadUrl: null,
        downloadExpiresAt: null,
        createdAt: at(MONDAY_OPEN),
        completedAt: null
      })
      const id = r.body.reportId
      await advance(4)
      expect((await p.sb("GET", `/reports/${id}`)).body.status).toBe("QUEUED")
      await advance(1)
      expect((await p.sb("GET", `/reports/${id}`)).body.status).toBe("GENERATING")
      await advance(24)
      expect((await p.sb("GET", `/reports/${id}`)).body.status).toBe("GENERATING")
      await advance(1)
      const ready = (await p.sb("GET", `/reports/${id}`)).body
      expect(ready).toMatchObject({ status: "READY", completedAt: at(MONDAY_OPEN + 30_000), downloadExpiresAt: at(MONDAY_OPEN + 30_000 + 3_600_000) })
      expect(ready.downloadUrl).toMatch(new RegExp(`^https://files\\.sokoni\\.test/reports/${id}\\.csv\\?expires=\\d+&sig=[0-9a-f]{32}$`))
      const file = await content(id)
      expect(file.rowCount).toBe(1)
      const [header, row] = (file.content ?? "").split("\r\n")
      expect(header).toBe("orderId,account,createdAt,side,symbol,exchange,quantity,priceAtOrder,gross,fee,totalAmount,status")
      expect(row?.startsWith(`${order.orderId},${account.id},`)).toBe(true)
      // once the address expired, a read signs a new one valid an hour from then
      await advance(3600)
      const later = (await p.sb("GET", `/reports/${id}`)).body
      expect(later.downloadExpiresAt).toBe(at(MONDAY_OPEN + 3_630_000 + 3_600_000))
      expect(later.downloadUrl).not.toBe(ready.downloadUrl)
    })

    it("renders JSON, restricts to one sub-account, and fails PDF (not rendered)", async () => {
      const a = await tradingAccount(p, "rpt-a", 200)
      await tradingAccount(p, "rpt-b", 300)
      const json = await p.sb("POST", "/reports", { type: "TRANSACTIONS", format: "JSON", from: "2026-11-01", to: "2026-11-30", subAccountId: a.id })
      await advance(1)
      const pdf = await p.sb("POST", "/reports", { type: "SUB_ACCOUNTS", format: "PDF", from: "2026-11-01", to: "2026-11-30" })
      await advance(1)
      const all = await p.sb("POST", "/reports", { type: "SUB_ACCOUNTS", from: "2026-11-01", to: "2026-11-30" })
      await advance(30)
      const rows = JSON.parse((await content(json.body.reportId)).content ?? "null")
      expect(rows).toEqual([expect.objectContaining({ account: a.id, type: "DEPOSIT", amount: 200, balanceAfter: 200 })])
      expect((await content(all.body.reportId)).rowCount).toBe(2)
      expect((await p.sb("GET", `/reports/${pdf.body.reportId}`)).body).toMatchObject({
        status: "FAILED",
        downloadUrl: null,
        completedAt: at(MONDAY_OPEN + 31_000)
      })
      const list = await p.sb("GET", "/reports?limit=2")
      expect(list.body.reports.map((r: any) => r.reportId)).toEqual([all.body.reportId, pdf.body.reportId])
      const next = await p.sb("GET", `/reports?limit=2&cursor=${list.body.nextCursor}`)
      expect([next.body.reports.map((r: any) => r.reportId), next.body.hasMore]).toEqual([[json.body.reportId], false])
    })

    it("answers bad dates 400, unknown sub-accounts and other partners' reports 404, and writes nothing for them", async () => {
      const cases: Array<[unknown, number, string]> = [
        [{ type: "TRADES", from: "2026-02-30", to: "2026-03-01" }, 400, "from"],
        [{ type: "TRADES", from: "2026-11-02", to: "2026-11-01" }, 400, "from"],
        [{ type: "TRADES", from: "2025-01-01", to: "2026-01-03" }, 400, "to"],
        [{ type: "TRADES", from: "2026-12-01", to: "2026-12-02" }, 400, "from"],
        [{ type: "TRADES", from: "2026-11-01", to: "23-11-2026" }, 400, "to"]
      ]
      for (const [body, status, param] of cases) {
        const r = await p.sb("POST", "/reports", body)
        expect([r.status, r.body.error.code, r.body.error.param]).toEqual([status, "VALIDATION_ERROR", param])
      }
      const badType = await p.sb("POST", "/reports", { type: "TAXES", from: "2026-11-01", to: "2026-11-02" })
      expect(badType.status).toBe(400)
      const unknownUser = await p.sb("POST", "/reports", { type: "TRADES", from: "2026-11-01", to: "2026-11-02", subAccountId: "usr_nope" })
      expect([unknownUser.status, unknownUser.body.error.code]).toEqual([404, "NOT_FOUND"])
      expect((await p.sb("GET", "/reports")).body.reports).toEqual([])
      const mine = await p.sb("POST", "/reports", { type: "TRADES", from: "2026-11-01", to: "2026-11-02" })
      const other = await partnerOf(engine)
      expect((await other.sb("GET", `/reports/${mine.body.reportId}`)).status).toBe(404)
      expect((await p.call("production", "GET", `/reports/${mine.body.reportId}`)).status).toBe(404)
      expect((await p.sb("GET", "/reports/rpt_unknown")).status).toBe(404)
      const crossed = await p.call("production", "GET", `/reports?cursor=${(await p.sb("GET", "/reports?limit=1")).body.nextCursor ?? "x"}`)
      expect(crossed.status).toBe(400)
    })

    it("is wiped by the sandbox reset, and its pending job then finds nothing", async () => {
      const r = await p.sb("POST", "/reports", { type: "TRADES", from: "2026-11-01", to: "2026-11-02" })
      await p.reset()
      await advance(60)
      expect((await p.sb("GET", `/reports/${r.body.reportId}`)).status).toBe(404)
      expect((await p.sb("GET", "/reports")).body.reports).toEqual([])
    })
  })

  describe.skipIf(skip)(`invoices (${store})`, tagsFor(store), () => {
    let engine: ReturnType<typeof startEngine>
    let dispose: () => Promise<void>
    beforeEach(async () => {
      ;({ engine, dispose } = await engineOn(store))
    })
    afterEach(() => dispose())

    it("derives one invoice per month from the tier and production requests; the sandbox has none", async () => {
      const created = await engine.admin("POST", "/_sim/partners", { businessName: "Growth Co", email: "g@co.test", tier: "growth" })
      const key = created.body.liveKey as string
      const live = (path: string) => engine.call("GET", `/api/v1/partner${path}`, { headers: { "x-api-key": key } })
      for (let i = 0; i < 3; i++) await live("/settings")
      const draft = await live("/invoices")
      expect(draft.body.invoices).toEqual([
        {
          invoiceId: "inv_202611",
          period: "2026-11",
          status: "DRAFT",
          currency: "USD",
          amountDue: 499,
          amountPaid: 0,
          lines: [
            { description: "Growth plan", quantity: 1, unitPrice: 499, amount: 499 },
            { description: "API requests (1,000,000 included)", quantity: 3, unitPrice: 0, amount: 0 }
          ],
          issuedAt: null,
          dueAt: null,
          paidAt: null,
          pdfUrl: null
        }
      ])
      // December 1st: November is issued, due in 14 days, overdue after that
      await engine.admin("POST", "/_sim/clock/advance", { to: "2026-12-01T00:00:00.000Z" })
      const issued = (await live("/invoices/inv_202611")).body
      expect(issued).toMatchObject({ status: "ISSUED", issuedAt: "2026-12-01T00:00:00.000Z", dueAt: "2026-12-15T00:00:00.000Z" })
      // three reads of /settings and the first /invoices, all in November
      expect(issued.lines[1].quantity).toBe(4)
      expect((await live("/invoices")).body.invoices.map((i: any) => [i.invoiceId, i.status])).toEqual([
        ["inv_202612", "DRAFT"],
        ["inv_202611", "ISSUED"]
      ])
      await engine.admin("POST", "/_sim/clock/advance", { to: "2026-12-15T00:00:01.000Z" })
      expect((await live("/invoices/inv_202611")).body.status).toBe("OVERDUE")
      expect((await live("/invoices/inv_202610")).status).toBe(404)
      expect((await live("/invoices/nonsense")).status).toBe(404)
      const sandbox = await engine.call("GET", "/api/sandbox/v1/partner/invoices", { headers: { "x-api-key": created.body.sandboxKey } })
      expect(sandbox.body).toEqual({ invoices: [], count: 0, hasMore: false, nextCursor: null })
      expect((await engine.call("GET", "/api/sandbox/v1/partner/invoices/inv_202611", { headers: { "x-api-key": created.body.sandboxKey } })).status).toBe(404)
    })
  })
}

describe("invoice and report arithmetic (pure)", () => {
  const nov = Date.parse("2026-11-01T00:00:00.000Z")
  it("bills each started 1,000 requests above the plan at 0.50 USD, and a nothing-due month is PAID at issue", () => {
    const over = invoiceFor("starter", nov, 100_001, Date.parse("2026-12-02T00:00:00.000Z"))
    expect(over.lines[2]).toEqual({ description: "API requests above the plan, per 1,000", quantity: 1, unitPrice: 0.5, amount: 0.5 })
    expect([over.amountDue, over.status]).toEqual([0.5, "ISSUED"])
    const free = invoiceFor("starter", nov, 100_000, Date.parse("2026-12-02T00:00:00.000Z"))
    expect([free.lines.length, free.amountDue, free.status, free.paidAt]).toEqual([2, 0, "PAID", "2026-12-01T00:00:00.000Z"])
    expect(invoiceFor("enterprise", nov, 0, nov).amountDue).toBe(1999)
    const due = Date.parse("2026-12-15T00:00:00.000Z")
    expect([invoiceFor("growth", nov, 0, due).status, invoiceFor("growth", nov, 0, due + 1).status]).toEqual(["ISSUED", "OVERDUE"])
    const dec = Date.parse("2026-12-01T00:00:00.000Z")
    expect([invoiceFor("growth", nov, 0, dec - 1).status, invoiceFor("growth", nov, 0, dec).status]).toEqual(["DRAFT", "ISSUED"])
  })
  it("quotes CSV cells that need it and ends lines with CRLF", () => {
    expect(
      render(
        "CSV",
        ["a", "b"],
        [
          ["x,y", 'say "hi"'],
          [null, 1]
        ]
      )
    ).toBe('a,b\r\n"x,y","say ""hi"""\r\n,1\r\n')
    expect(render("JSON", ["a", "b"], [[1, null]])).toBe('[{"a":1,"b":null}]')
  })
  it("writes an absent cell as an empty CSV cell, like a null one", () => {
    expect(render("CSV", ["a", "b", "c"], [[undefined, null, 0]])).toBe("a,b,c\r\n,,0\r\n")
  })
})
