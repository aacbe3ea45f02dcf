/**
 * `sokoni webhooks check` grading real receivers over the network (the two examples in contracts/examples, started
 * on port 0 in this process) and scripted transports (timeouts, a receiver that accepts anything, what is sent).
 * No test waits on real time: the receivers answer at once, and timeouts are scripted through the Outbound seam.
 */
import { createHmac } from "node:crypto"
import { Effect, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Receiver, startCorrectReceiver } from "../../contracts/examples/receiver-correct.ts"
import { startNaiveReceiver } from "../../contracts/examples/receiver-naive.ts"
import { type CheckableEvent, CHECKABLE_EVENTS } from "../../engine/conform/receiver-events.ts"
import { checkReceiver, type ReceiverCheckOptions, replayCommand, spaced } from "../../engine/conform/webhook-receiver-check.ts"
import type { RunReport } from "../../engine/report/model.ts"
import { Outbound, type OutboundRequest, type OutboundResult } from "../../engine/sim/outbound.ts"

const SECRET = "whsec_receiver_check_test"
const START = Date.UTC(2026, 0, 5, 9, 30)

const NAMES = {
  valid: "accepts a correctly signed delivery of each event",
  raw: "verifies the signature over the raw bytes received (not re-serialised JSON)",
  wrongSecret: "rejects a delivery signed with another secret",
  tampered: "rejects a body changed after signing (a flipped byte, an added space)",
  duplicate: "answers 2xx to a repeated eventId (deduplication, as far as it can be seen)",
  reorder: "copes with reordering: order.pending after order.filled is answered 2xx",
  retry: "accepts a retried delivery (same eventId and bytes) after a failed attempt",
  timing: "answers within 8 s"
} as const

const run = (options: Partial<ReceiverCheckOptions> & Pick<ReceiverCheckOptions, "url">, outbound: Layer.Layer<Outbound> = Outbound.network) =>
  Effect.runPromise(checkReceiver({ secret: SECRET, seed: 7, startMs: START, ...options }).pipe(Effect.provide(outbound)))

/** What a receiver can score: every check's points (12 with the default events). */
const TOTAL_MAX = 12

const statusByName = (report: RunReport) => Object.fromEntries(report.checks.map((c) => [c.name, c.status]))
const total = (report: RunReport) => report.checks.reduce((s, c) => [s[0]! + (c.score ?? 0), s[1]! + (c.maxScore ?? 0)], [0, 0])

/** A transport that records every request and answers with `answer`. */
const scripted = (answer: (request: OutboundRequest) => OutboundResult) => {
  const sent: Array<OutboundRequest> = []
  const layer = Layer.succeed(
    Outbound,
    Outbound.of({
      mode: "simulated",
      post: (request) =>
        Effect.sync(() => {
          sent.push(request)
          return answer(request)
        })
    })
  )
  return { sent, layer }
}
const ok: OutboundResult = { kind: "answered", status: 200, latencyMs: 3 }

describe("the correct example receiver", () => {
  let receiver: Receiver
  let report: RunReport
  beforeAll(async () => {
    receiver = await startCorrectReceiver(SECRET)
    report = await run({ url: receiver.url })
  })
  afterAll(() => receiver.close())

  it("gets full marks", () => {
    expect(report.checks.map((c) => c.name)).toEqual([
      NAMES.valid,
      NAMES.raw,
      NAMES.wrongSecret,
      NAMES.tampered,
      NAMES.duplicate,
      NAMES.reorder,
      NAMES.retry,
      NAMES.timing
    ])
    expect(report.checks.filter((c) => c.status !== "passed")).toEqual([])
    expect(total(report)).toEqual([12, 12])
    expect(report.target).toBe(receiver.url)
  })

  it("applied every accepted event once: duplicates and retries were deduplicated, the late order.pending ignored", () => {
    const ids = receiver.applied.map((a) => a.eventId)
    expect(new Set(ids).size).toBe(ids.length)
    // valid probes (one per event), the raw-bytes probe, one of the duplicate pair, order.filled, one retried event
    expect(ids.length).toBe(CHECKABLE_EVENTS.length + 1 + 1 + 1 + 1)
  })

  it("has timelines on the checker's clock: the retry walks 5 s and 30 s without waiting", () => {
    const retry = report.checks.find((c) => c.name === NAMES.retry)
    const deliveries = retry?.timeline?.filter((t) => t.kind === "delivery") ?? []
    expect(deliveries).toHaveLength(3)
    const gaps = deliveries.slice(1).map((d, i) => Date.parse(d.at) - Date.parse(deliveries[i]!.at))
    expect(gaps[0]).toBeGreaterThanOrEqual(5_000)
    expect(gaps[0]).toBeLessThan(6_000)
    expect(gaps[1]).toBeGreaterThanOrEqual(30_000)
    expect(gaps[1]).toBeLessThan(31_000)
    expect(Date.parse(report.finishedAt) - START).toBeGreaterThanOrEqual(35_000)
  })
})

describe("a receiver written against the public service (signature in x-mystocks-signature, facts row 11.2)", () => {
  let receiver: Receiver
  beforeAll(async () => {
    receiver = await startCorrectReceiver(SECRET, 0, "x-mystocks-signature")
  })
  afterAll(() => receiver.close())

  it("scores full marks with --signature-header x-mystocks-signature, and the replay command keeps the flag", async () => {
    const report = await run({ url: receiver.url, signatureHeaders: ["x-mystocks-signature"] })
    expect(total(report)).toEqual([TOTAL_MAX, TOTAL_MAX])
    const options = { url: receiver.url, secret: SECRET, seed: 7, startMs: START, signatureHeaders: ["x-mystocks-signature"] }
    expect(replayCommand(options)).toContain("--signature-header 'x-mystocks-signature'")
  })

  it("without the flag it refuses every correctly signed delivery, and the report says so", async () => {
    const report = await run({ url: receiver.url })
    const [score, max] = total(report)
    expect(max).toBe(TOTAL_MAX)
    expect(score).toBeLessThan(TOTAL_MAX)
    expect(statusByName(report)[NAMES.valid]).toBe("failed")
  })
})

describe("the naive example receiver", () => {
  let receiver: Receiver
  let report: RunReport
  beforeAll(async () => {
    receiver = await startNaiveReceiver(SECRET)
    report = await run({ url: receiver.url })
  })
  afterAll(() => receiver.close())

  it("fails the raw-bytes, tampering and reordering checks, and passes the rest", () => {
    expect(statusByName(report)).toEqual({
      [NAMES.valid]: "passed",
      [NAMES.raw]: "failed",
      [NAMES.wrongSecret]: "passed",
      [NAMES.tampered]: "failed",
      [NAMES.duplicate]: "passed",
      [NAMES.reorder]: "failed",
      [NAMES.retry]: "passed",
      [NAMES.timing]: "passed"
    })
    expect(total(report)).toEqual([7, 12]) // 12 less raw bytes (2), tampering (2) and reordering (1)
  })

  it("says why each failed, with a curl that reproduces it and the replay command", () => {
    const byName = new Map(report.checks.map((c) => [c.name, c]))
    expect(byName.get(NAMES.raw)?.message).toMatch(/answered 401.*re-serialises/)
    expect(byName.get(NAMES.tampered)?.message).toMatch(/space added after signing was answered 200/)
    expect(byName.get(NAMES.reorder)?.message).toMatch(/sent after its order\.filled was answered 409/)
    for (const name of [NAMES.raw, NAMES.tampered, NAMES.reorder]) {
      expect(byName.get(name)?.reproducer).toMatch(/^curl -sS -i -X POST '.*' -H 'x-service-signature: [0-9a-f]{64}' --data-binary '\{/)
      expect(byName.get(name)?.replay).toBe(`npx sokoni webhooks check --url '${receiver.url}' --secret "$SOKONI_WEBHOOK_SECRET" --seed 7`)
    }
  })

  it("shows the documented limit: the duplicate passes although the naive receiver applied it twice", () => {
    const counts = new Map<string, number>()
    for (const a of receiver.applied) counts.set(a.eventId, (counts.get(a.eventId) ?? 0) + 1)
    expect([...counts.values()].filter((n) => n > 1).length).toBeGreaterThanOrEqual(2) // the duplicate and the retried event
    expect(report.checks.find((c) => c.name === NAMES.duplicate)?.message).toMatch(/not visible from outside/)
  })

  it("the reproducer of the raw-bytes failure replays it: the naive receiver refuses it again", async () => {
    const check = report.checks.find((c) => c.name === NAMES.raw)
    const [, signature, body] = check?.reproducer?.match(/x-service-signature: ([0-9a-f]+)' --data-binary '(.*)'$/) ?? []
    const response = await fetch(receiver.url, { method: "POST", headers: { "x-service-signature": signature ?? "" }, body: body ?? "" })
    expect(response.status).toBe(401)
    expect(
      createHmac("sha256", SECRET)
        .update(body ?? "")
        .digest("hex")
    ).toBe(signature) // it was correctly signed
  })
})

describe("grading through a scripted transport", () => {
  it("fails the time limit on a timeout, and passes the injected limit to every request", async () => {
    const { sent, layer } = scripted((request) => (request.body.includes('"event":"deposit.confirmed"') ? { kind: "timeout" } : ok))
    const report = await run({ url: "http://receiver.test/hook", timeoutMs: 250 }, layer)
    expect(sent.every((r) => r.timeoutMs === 250)).toBe(true)
    const timing = report.checks.find((c) => c.name === "answers within 0.25 s")
    expect(timing?.status).toBe("failed")
    expect(timing?.message).toMatch(/signed deposit\.confirmed got no answer within 250 ms/)
    expect(report.checks.find((c) => c.name === NAMES.valid)?.status).toBe("failed")
  })

  it("defaults to the contract's 8 s and passes it when every answer is prompt", async () => {
    const { sent, layer } = scripted(() => ok)
    const report = await run({ url: "http://receiver.test/hook", events: ["test.event"] }, layer)
    expect(new Set(sent.map((r) => r.timeoutMs))).toEqual(new Set([8_000]))
    expect(report.checks.find((c) => c.name === NAMES.timing)?.status).toBe("passed")
  })

  it("a receiver that accepts anything fails the signature and tampering checks", async () => {
    const { layer } = scripted(() => ok)
    const report = await run({ url: "http://receiver.test/hook" }, layer)
    const failed = report.checks.filter((c) => c.status === "failed").map((c) => c.name)
    expect(failed).toEqual([NAMES.wrongSecret, NAMES.tampered])
  })

  it("a receiver that refuses anything fails every check that needs a 2xx", async () => {
    const { layer } = scripted(() => ({ kind: "answered", status: 401, latencyMs: 1 }))
    const report = await run({ url: "http://receiver.test/hook" }, layer)
    const passed = report.checks.filter((c) => c.status === "passed").map((c) => c.name)
    expect(passed).toEqual([NAMES.wrongSecret, NAMES.tampered, NAMES.timing])
  })

  it("an unreachable receiver is refused nothing and accepted nothing: every check fails", async () => {
    const { layer } = scripted(() => ({ kind: "unreachable", reason: "ECONNREFUSED" }))
    const report = await run({ url: "http://receiver.test/hook" }, layer)
    expect(report.checks.filter((c) => c.status === "passed").map((c) => c.name)).toEqual([NAMES.timing])
    expect(report.checks.find((c) => c.name === NAMES.wrongSecret)?.message).toMatch(/unreachable \(ECONNREFUSED\)/)
  })
})

describe("what is sent", () => {
  const capture = async (seed: number, events?: ReadonlyArray<CheckableEvent>) => {
    const { sent, layer } = scripted(() => ok)
    const report = await run({ url: "http://receiver.test/hook", seed, events }, layer)
    return { sent, report }
  }

  it("is built from the seed: the same seed sends the same bytes, another seed other ids", async () => {
    const a = await capture(7)
    const b = await capture(7)
    const c = await capture(8)
    expect(a.sent.map((r) => r.body)).toEqual(b.sent.map((r) => r.body))
    const ids = (sent: ReadonlyArray<OutboundRequest>) => sent.map((r) => JSON.parse(r.body).eventId as string)
    expect(ids(c.sent).some((id) => ids(a.sent).includes(id))).toBe(false)
  })

  it("signs like the engine: hex HMAC-SHA256 of the exact bytes in x-service-signature", async () => {
    const { sent } = await capture(7)
    const signed = sent.filter((r) => r.headers["x-service-signature"] === createHmac("sha256", SECRET).update(r.body).digest("hex"))
    // every request but the wrong-secret one and the two tampered bodies
    expect(sent.length - signed.length).toBe(3)
    for (const r of sent) expect(r.headers["content-type"]).toBe("application/json")
  })

  it("sends envelopes {eventId, event, timestamp, data, isSandbox} with fresh eventIds except the repeats", async () => {
    const { sent } = await capture(7)
    const envelopes = sent.map((r) => JSON.parse(r.body))
    for (const e of envelopes) expect(Object.keys(e)).toEqual(["eventId", "event", "timestamp", "data", "isSandbox"])
    const counts = new Map<string, number>()
    for (const e of envelopes) counts.set(e.eventId, (counts.get(e.eventId) ?? 0) + 1)
    // the tampered pair share an id, the duplicate is sent twice, the retried delivery three times
    expect([...counts.values()].filter((n) => n > 1).sort()).toEqual([2, 2, 3])
  })

  it("changes exactly one byte for the flipped-byte probe, and only whitespace for the added-space probe", async () => {
    const { sent } = await capture(7)
    const [flipped, added] = sent.filter((r) => r.headers["x-service-signature"] !== createHmac("sha256", SECRET).update(r.body).digest("hex")).slice(1)
    const original = sent.find((r) => r !== flipped && JSON.parse(r.body).eventId === JSON.parse(added!.body).eventId && r !== added)
    expect(original).toBeUndefined() // the original bytes of the tampered delivery are never sent
    expect(flipped!.body.length).toBe(added!.body.length - 1)
    expect(JSON.parse(added!.body)).toEqual(JSON.parse(added!.body.replace(": ", ":")))
    const diffs = [...flipped!.body].filter((ch, i) => ch !== added!.body.replace(": ", ":")[i]).length
    expect(diffs).toBe(1)
    expect(JSON.parse(flipped!.body)).not.toEqual(JSON.parse(added!.body))
  })

  it("skips the reordering check when --events leaves out the order events", async () => {
    const { report, sent } = await capture(7, ["deposit.confirmed", "kyc.updated"])
    const reorder = report.checks.find((c) => c.name === NAMES.reorder)
    expect(reorder).toMatchObject({ status: "skipped", score: 0, maxScore: 0 })
    expect(sent.some((r) => r.body.includes('"event":"order.'))).toBe(false)
  })
})

describe("spaced", () => {
  it("adds a space after separators outside strings only", () => {
    const body = JSON.stringify({ a: "x:y,z", b: [1, 2], c: { d: 'q"u:o,te' } })
    expect(spaced(body)).toBe(`{"a": "x:y,z", "b": [1, 2], "c": {"d": "q\\"u:o,te"}}`)
    expect(JSON.parse(spaced(body))).toEqual(JSON.parse(body))
  })
})
