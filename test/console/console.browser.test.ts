/**
 * The console in a real browser (issue 24, item 3): Debian's Chromium driven by playwright-core opens
 * `/_sim/console` on an engine with a manual desk, is given the admin token, fills a queued order from its desk
 * panel, and shows the order FILLED and its webhook delivered, live (the feed, not a reload). Skipped, saying why,
 * only when no Chromium is installed. Screenshots go to out/console/, or to docs/screenshots/ with
 * SOKONI_CONSOLE_SCREENSHOTS=docs (how the ones in the docs are made).
 */
import { mkdirSync } from "node:fs"
import { join } from "node:path"
import { type Browser, chromium as playwright, type Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type RunningServer, startServer } from "../../engine/http/node-server.ts"
import { portOf } from "../http/node-server-kit.ts"
import { ADMIN, chromium, client, engineConfig, missingChromium, RECEIVER, seedChecks, seedWorld } from "./console-kit.ts"

const ROOT = join(import.meta.dirname, "..", "..")
const SHOTS = process.env.SOKONI_CONSOLE_SCREENSHOTS === "docs" ? join(ROOT, "docs", "screenshots") : join(ROOT, "out", "console")
/** Failure bounds for the page on a busy machine, never expectations of speed. */
const PAGE_BOUND_MS = 30_000

const title = chromium === undefined ? `the console in Chromium: SKIPPED, ${missingChromium}` : "the console in Chromium"

describe.skipIf(chromium === undefined)(title, () => {
  let server: RunningServer
  let browser: Browser
  let base: string

  beforeAll(async () => {
    server = await startServer(engineConfig, 0)
    base = `http://127.0.0.1:${portOf(server)}`
    browser = await playwright.launch({ executablePath: chromium as string, headless: true, args: ["--no-sandbox"] })
  })

  afterAll(async () => {
    await browser?.close()
    await server?.stop()
  })

  const open = async (): Promise<Page> => {
    const page = await browser.newPage({ viewport: { width: 1600, height: 1000 }, deviceScaleFactor: 1 })
    page.setDefaultTimeout(PAGE_BOUND_MS)
    await page.goto(`${base}/_sim/console`)
    // By keyboard: the token dialog opens with its field focused, and Enter connects.
    await page.waitForFunction(() => document.activeElement?.id === "token-input")
    await page.keyboard.type(ADMIN)
    await page.keyboard.press("Enter")
    await page.locator("#live.on").waitFor()
    return page
  }

  /** The whole page, or (a dialog open, whose backdrop covers the viewport only) what the viewport shows. */
  const shot = async (page: Page, name: string, fullPage = true) => {
    mkdirSync(SHOTS, { recursive: true })
    await page.screenshot({ path: join(SHOTS, `console-${name}.png`), fullPage })
  }

  it("fills a queued order from the desk panel and shows it FILLED and its webhook delivered", async () => {
    const call = client(base)
    const world = await seedWorld(call, 4)
    await seedChecks(base, world.key)
    // A partner's event stream, open while the console watches: its panel lists it.
    const listening = new AbortController()
    const stream = await fetch(`${base}/api/sandbox/v1/partner/stream?since=0`, { headers: { "x-api-key": world.key }, signal: listening.signal })
    void stream.body?.pipeTo(new WritableStream()).catch(() => undefined)
    const page = await open()
    await page.locator("#streams tr", { hasText: world.partnerId }).waitFor()
    await page.locator("#faults tr", { hasText: "listOrders" }).first().waitFor()
    await page.locator("#findings tr", { hasText: "createSubAccount" }).first().waitFor()
    const [first, second, third, fourth] = world.orders as [string, string, string, string]
    const deskRow = (orderId: string) => page.locator(`#desk tr[data-order="${orderId}"]`)
    await deskRow(first).waitFor()
    await shot(page, "queue")

    await page.getByRole("button", { name: `Fill order ${first}`, exact: true }).click()

    // The desk row goes and the order reads FILLED; once the clock moves (the console's +1 min: a manual clock runs
    // due jobs only when advanced), the delivery of its order.filled is delivered. All from the feed, no reload.
    await deskRow(first).waitFor({ state: "detached" })
    await page.locator(`#orders tr[data-order="${first}"] td.status`, { hasText: "FILLED" }).waitFor()
    await page.getByRole("button", { name: "+1 min" }).click()
    const filledDelivery = page.locator('#deliveries tr[data-event="order.filled"]', { hasText: "delivered" })
    await filledDelivery.waitFor()
    await expect(filledDelivery.textContent()).resolves.toContain("200")
    await expect(filledDelivery.textContent()).resolves.toMatch(/\d+ B/)

    // A rejection with a code, through the dialog, shows the code on the order.
    await page.getByRole("button", { name: `Reject order ${second}`, exact: true }).click()
    await page.getByLabel("Rejection code").selectOption("PRICE_OUT_OF_TOLERANCE")
    await shot(page, "reject", false)
    await page.getByRole("button", { name: "Reject", exact: true }).click()
    await page.locator(`#orders tr[data-order="${second}"] td.status`, { hasText: "PRICE_OUT_OF_TOLERANCE" }).waitFor()

    // A partial fill leaves the order at the desk, partly filled.
    await page.getByRole("button", { name: `Partially fill order ${third}` }).click()
    await page.getByLabel(/Quantity/).fill("100")
    await page.getByRole("button", { name: "Fill", exact: true }).click()
    await deskRow(third).locator("td", { hasText: "100/300" }).waitFor()

    // A settlement failure unwinds the order: REJECTED with SETTLEMENT_FAILED.
    await page.getByRole("button", { name: `Fail the settlement of order ${fourth}`, exact: true }).click()
    await page.getByRole("button", { name: "Fail settlement", exact: true }).click()
    await page.locator(`#orders tr[data-order="${fourth}"] td.status`, { hasText: "SETTLEMENT_FAILED" }).waitFor()
    await shot(page, "filled")

    // What the page showed is what the engine holds.
    const state = await call("GET", "/_sim/console/state")
    const orders = state.orders as Array<{ order: { orderId: string; status: string } }>
    expect(orders.find((o) => o.order.orderId === first)?.order.status).toBe("FILLED")
    const received = await call("POST", "/_sim/receivers/take", { partnerId: world.partnerId })
    expect((received.received as Array<{ url: string; event: string }>).some((r) => r.url === RECEIVER && r.event === "order.filled")).toBe(true)
    listening.abort()
    await page.close()
  })

  it("asks again for a wrong token, and keeps the right one for the tab in sessionStorage only", async () => {
    const page = await browser.newPage()
    page.setDefaultTimeout(PAGE_BOUND_MS)
    await page.goto(`${base}/_sim/console`)
    await page.getByRole("textbox", { name: "Token" }).fill("not-the-token")
    await page.getByRole("button", { name: "Connect" }).click()
    await page.getByRole("alert").filter({ hasText: "wrong admin token" }).waitFor()
    await page.getByRole("textbox", { name: "Token" }).fill(ADMIN)
    await page.getByRole("button", { name: "Connect" }).click()
    await page.locator("#live.on").waitFor()
    const kept = await page.evaluate(() => ({ session: Object.values(sessionStorage), local: Object.values(localStorage) }))
    expect(kept).toEqual({ session: [ADMIN], local: [] })
    await page.close()
  })

  it("moves the clock to an exchange's next close from the markets table", async () => {
    const page = await open()
    const before = await page.locator("#now").getAttribute("datetime")
    const jump = page.getByRole("button", { name: /^Jump to the next close of NSE/ })
    const label = (await jump.getAttribute("aria-label")) ?? ""
    await jump.click()
    const target = /(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})$/.exec(label)?.[1]
    expect(target).toBeDefined()
    await page.locator("#now", { hasText: target as string }).waitFor()
    expect(await page.locator("#now").getAttribute("datetime")).not.toBe(before)
    await shot(page, "clock")

    // The next open or close of any exchange, from the clock's own button.
    const next = page.locator("#next-boundary")
    const nextLabel = (await next.getAttribute("aria-label")) ?? ""
    const nextAt = /at (\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})$/.exec(nextLabel)?.[1]
    expect(nextAt, nextLabel).toBeDefined()
    await next.click()
    await page.locator("#now", { hasText: nextAt as string }).waitFor()
    await page.close()
  })
})
