/**
 * `sokoni history check FILE` as a process: a hand-made history with an overdraw, a double debit and a rising
 * `X-RateLimit-Remaining` exits 1 naming each rule, and its HTML report shows each violation on a timeline with the
 * requests that make it and the replay command; a clean history exits 0; an unreadable one is a usage error (2).
 * Spawns processes (skipped by mutation testing).
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { sokoni } from "../support/sokoni-cli.ts"

const at = (s: number) => new Date(Date.parse("2026-11-23T08:00:00.000Z") + s * 1000).toISOString()
const entry = (s: number, fields: Record<string, unknown>) => ({
  kind: "exchange",
  sentAt: at(s),
  answeredAt: at(s + 0.2),
  caller: "sandbox:…ab12",
  method: "GET",
  path: "/api/sandbox/v1/partner/wallet",
  status: 200,
  body: "{}",
  ...fields
})
const order = (s: number, orderId: string) =>
  entry(s, {
    method: "POST",
    path: "/api/sandbox/v1/partner/trade",
    idempotencyKey: "buy-1",
    requestBody: '{"symbol":"SCOM.KE","type":"BUY","quantity":10,"quoteId":"qt_1"}',
    status: 202,
    body: JSON.stringify({ orderId, status: "PENDING" })
  })
const rate = { limit: 300, reset: 1_795_000_060 }
const BAD = [
  entry(0, { body: '{"balance":10,"available":10,"reserved":0}', rate: { ...rate, remaining: 299 } }),
  order(1, "ord_1"),
  order(2, "ord_2"),
  entry(3, { body: '{"balance":-25,"available":-25,"reserved":0}', rate: { ...rate, remaining: 296 } }),
  entry(4, { body: '{"balance":-25,"available":-25,"reserved":0}', rate: { ...rate, remaining: 298 } })
]

describe("sokoni history check (process)", () => {
  let dir: string
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "sokoni-history-"))
  })
  afterAll(() => rm(dir, { recursive: true, force: true }))

  it("flags an overdraw, a double debit and a rising Remaining, each on the report's timeline with the replay", async () => {
    const file = join(dir, "bad.jsonl")
    await writeFile(file, BAD.map((e) => `${JSON.stringify(e)}\n`).join(""))
    const run = await sokoni(["history", "check", file, "--report", join(dir, "bad")])
    expect(run.code).toBe(1)
    expect(run.stdout).toContain("5 entries in")
    expect(run.stdout).toMatch(/FAIL history no-negative-balance:/)
    expect(run.stdout).toMatch(/FAIL history idempotent-answer:/)
    expect(run.stdout).toMatch(/FAIL history rate-window:/)
    expect(run.stdout).toContain(`3 rules violated; replay: npx sokoni history check '${file}'`)
    const html = await readFile(join(dir, "bad", "report.html"), "utf8")
    expect(html).toContain("VIOLATION Idempotency-Key buy-1")
    expect(html).toContain("X-RateLimit-Remaining rose from 296")
    expect(html).toContain(`npx sokoni history check &#39;${file}&#39;`)
  }, 60_000)

  it("passes a clean history (exit 0) and refuses an unreadable one (exit 2, one line)", async () => {
    const clean = join(dir, "clean.jsonl")
    await writeFile(clean, `${JSON.stringify(BAD[0])}\n${JSON.stringify(BAD[1])}\n`)
    const ok = await sokoni(["history", "check", clean])
    expect(ok.code).toBe(0)
    expect(ok.stdout).toContain("the history holds every rule")
    const broken = join(dir, "broken.jsonl")
    await writeFile(broken, "not json\n")
    const bad = await sokoni(["history", "check", broken])
    expect(bad.code).toBe(2)
    expect(bad.stderr.trim()).toBe(`sokoni: ${broken}: line 1 is not JSON`)
  }, 60_000)
})
