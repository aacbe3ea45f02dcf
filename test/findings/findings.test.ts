/**
 * The findings book (E-360): one entry per (partner, kind, operation) whose count grows and whose first sentence
 * stays; oldest first seen first; bounded, the oldest first seen let go and counted; filtered by partner. And
 * `GET /_sim/findings`: behind the admin token, answers what the engine's Findings service holds, per engine.
 */
import { Effect } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { Findings, makeFindingsBook } from "../../engine/findings/findings.ts"
import { startEngine } from "../http/harness.ts"

const missingKey = { partner: "ptn_a", kind: "dialect.missing-idempotency-key", operation: "createSubAccount", message: "first sentence" }

describe("the findings book", () => {
  it("keeps one entry per (partner, kind, operation), counting repeats and keeping the first sentence", () => {
    const book = makeFindingsBook()
    book.record(missingKey, "2026-01-05T09:30:00.000Z")
    book.record({ ...missingKey, message: "a later sentence" }, "2026-01-05T09:31:00.000Z")
    book.record({ ...missingKey, partner: "ptn_b" }, "2026-01-05T09:32:00.000Z")
    book.record({ ...missingKey, operation: "submitKyc" }, "2026-01-05T09:33:00.000Z")
    const { findings, dropped } = book.list()
    expect(dropped).toBe(0)
    expect(findings.map((f) => [f.partner, f.operation, f.count])).toEqual([
      ["ptn_a", "createSubAccount", 2],
      ["ptn_b", "createSubAccount", 1],
      ["ptn_a", "submitKyc", 1]
    ])
    expect(findings[0]).toMatchObject({ message: "first sentence", firstAt: "2026-01-05T09:30:00.000Z", lastAt: "2026-01-05T09:31:00.000Z" })
    expect(book.list("ptn_b").findings.map((f) => f.partner)).toEqual(["ptn_b"])
  })

  it("tells a null partner from a partner id", () => {
    const book = makeFindingsBook()
    book.record({ ...missingKey, partner: null }, "t")
    book.record(missingKey, "t")
    expect(book.list().findings.map((f) => f.partner)).toEqual([null, "ptn_a"])
  })

  it("stays within its bound by letting the oldest first seen go, and counts what it let go", () => {
    const book = makeFindingsBook(3)
    for (const op of ["a", "b", "c", "d", "e"]) book.record({ ...missingKey, operation: op }, "t")
    book.record({ ...missingKey, operation: "e" }, "t")
    const { findings, dropped } = book.list()
    expect(findings.map((f) => [f.operation, f.count])).toEqual([
      ["c", 1],
      ["d", 1],
      ["e", 2]
    ])
    expect(dropped).toBe(2)
  })

  it("is stamped by the clock the service is given", async () => {
    const listed = await Effect.runPromise(
      Effect.gen(function* () {
        const findings = yield* Findings
        yield* findings.record(missingKey)
        return yield* findings.list()
      }).pipe(Effect.provide(Findings.layerTest))
    )
    expect(listed.findings[0]).toMatchObject({ count: 1, firstAt: "1970-01-01T00:00:00.000Z" })
  })
})

describe("GET /_sim/findings", () => {
  const engines: Array<ReturnType<typeof startEngine>> = []
  afterEach(async () => {
    for (const e of engines.splice(0)) await e.dispose()
  })

  it("answers the engine's findings on the engine clock, filtered by partnerId, behind the admin token", async () => {
    const engine = startEngine()
    engines.push(engine)
    expect((await engine.admin("GET", "/_sim/findings")).body).toEqual({ dialect: "spec", findings: [], dropped: 0 })
    const record = (partner: string) => engine.runtime.runPromise(Findings.use((f) => f.record({ ...missingKey, partner })))
    await record("ptn_a")
    await record("ptn_a")
    await record("ptn_b")
    const all = await engine.admin("GET", "/_sim/findings")
    expect(all.status).toBe(200)
    expect(all.body.findings.map((f: { partner: string; count: number }) => [f.partner, f.count])).toEqual([
      ["ptn_a", 2],
      ["ptn_b", 1]
    ])
    expect(all.body.findings[0].firstAt).toBe("2026-11-23T08:00:00.000Z")
    const one = await engine.admin("GET", "/_sim/findings?partnerId=ptn_b")
    expect(one.body.findings.map((f: { partner: string }) => f.partner)).toEqual(["ptn_b"])
    expect((await engine.call("GET", "/_sim/findings")).status).toBe(401)
    expect((await engine.admin("GET", "/_sim/findings?partnerId=")).status).toBe(400)
  })

  it("is kept per engine: another engine starts with none", async () => {
    const first = startEngine()
    const second = startEngine()
    engines.push(first, second)
    await first.runtime.runPromise(Findings.use((f) => f.record(missingKey)))
    expect((await second.admin("GET", "/_sim/findings")).body.findings).toEqual([])
  })
})
