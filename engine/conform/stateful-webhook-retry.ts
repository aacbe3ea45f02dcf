/**
 * The webhook retry check of `sokoni conform` (issue 23, item 2): a receiver conform runs answers 500 to the first two
 * attempts of one delivery, and the target must retry it on the spec's schedule (attempt 2 after 5 s, attempt 3 30 s
 * after that) with the same eventId and the same signed bytes every time. The schedule is read twice: from the
 * target's own delivery record (`GET /webhooks/{id}/deliveries`: when each attempt ran, on the target's clock) and
 * from when the attempts reached the receiver (conform's clock, so only a retry far too early or too late shows;
 * without a control API only: with one, the target's clock is virtual and conform's own says nothing).
 * About 35 s of real waiting on a live target (virtual with a control API). The event is a deposit to a sub-account
 * of this run, so no market needs to be open.
 */
import { createHmac, timingSafeEqual } from "node:crypto"
import type { RunContext } from "./conform.ts"
import { type Received, startReceiver } from "./receiver.ts"
import { type Call, caller, codeOf, forgetWebhook, fundedSubAccount, partnerFor, type StatefulCheck, Verdict } from "./stateful-kit.ts"

/** Spec "Events", delivery rule 2: the delays before attempts 2 and 3 (the later ones are minutes to hours apart). */
export const FIRST_RETRY_DELAYS_MS: ReadonlyArray<number> = [5_000, 30_000]
/** How far an attempt may be from its due instant on the target's clock (its scheduler's tick, a busy moment). */
const TARGET_SLACK_MS = 1_500
/** How far an arrival interval may be from the delay on conform's clock (steps of a second, the network). */
const arrivalSlackMs = (delayMs: number) => 2_000 + delayMs / 10
const STEP_MS = 1_000

interface DeliveryRecord {
  readonly attempts?: number
  readonly deliveredAt?: string
  readonly nextAttemptAt?: string | null
  readonly success?: boolean
}

/**
 * Lets time pass in one-second steps until the receiver has `count` requests, or `boundMs` have passed. From a step
 * before the attempt is due (`dueMs` after the previous one) it also gives a request on the wire a real moment to land.
 */
const arrivals = async (ctx: RunContext, received: () => ReadonlyArray<Received>, count: number, dueMs: number, boundMs: number) => {
  const landed = async () => {
    for (let i = 0; i < 25 && received().length < count; i++) await ctx.target.pause(20)
  }
  if (dueMs === 0) await landed()
  // Nothing is due before the last second: let that pass in one wait (one clock advance with a control API).
  const quiet = Math.max(0, dueMs - STEP_MS)
  if (quiet > 0) await ctx.target.wait(quiet, `attempt ${count} of a webhook delivery, due ${Math.round(dueMs / 1000)} s after the previous one`)
  for (let waited = quiet; received().length < count && waited <= boundMs; waited += STEP_MS) {
    await ctx.target.wait(STEP_MS, `attempt ${count} of a webhook delivery to reach conform's receiver (at most ${Math.round(boundMs / 1000)} s)`)
    if (waited + 2 * STEP_MS >= dueMs) await landed()
  }
  return received().length >= count
}

const eventIdOf = (d: Received) => {
  try {
    return (JSON.parse(d.body) as { eventId?: unknown }).eventId
  } catch {
    return undefined
  }
}

const signedOver = (secret: string, d: Received) => {
  const given = Buffer.from(d.signature ?? "", "hex")
  const expected = createHmac("sha256", secret).update(d.raw).digest()
  return given.length === expected.length && timingSafeEqual(given, expected)
}

/** What is wrong with the attempts as received (eventId, bytes, signature), or undefined. */
const attemptProblem = (secret: string, got: ReadonlyArray<Received>): string | undefined => {
  const first = got[0]
  if (first === undefined) return "no attempt received"
  for (const [n, d] of got.entries()) {
    if (eventIdOf(d) !== eventIdOf(first))
      return `attempt ${n + 1} carried eventId ${String(eventIdOf(d))}, the first attempt ${String(eventIdOf(first))}: a retry must carry the same eventId (receivers deduplicate by it)`
    if (d.body !== first.body) return `attempt ${n + 1} carried other bytes than the first attempt: a retry resends the same delivery`
    if (!signedOver(secret, d)) return `attempt ${n + 1}'s x-service-signature is not the HMAC of the bytes received`
  }
  return undefined
}

export const webhookRetry: StatefulCheck = {
  id: "webhook-retry",
  suite: "stateful: webhooks",
  operation: "listWebhookDeliveries",
  name: "webhook-retry: a delivery answered 500 is retried after 5 s, then 30 s, with the same eventId and the same signed bytes",
  run: async (ctx) => {
    const v = new Verdict(ctx)
    const { key, call } = caller(ctx, v, await partnerFor(ctx))
    if (key === undefined) return v.skip("needs a sandbox key or --admin-token")
    const receiver = await startReceiver(ctx.target.recordDelivery, { failFirst: FIRST_RETRY_DELAYS_MS.length, now: ctx.now })
    let hookId: string | undefined
    try {
      const secret = `whsec_conform_${ctx.seed}_retry`
      const hook = await call("POST", "/webhooks", { url: receiver.url, events: ["deposit.confirmed"], secret })
      hookId = (hook.json as { id?: string } | null)?.id
      if (hook.status !== 201 || hookId === undefined) return v.fail(`POST /webhooks answered ${hook.status} ${codeOf(hook) ?? ""}; expected 201`)
      const funded = await fundedSubAccount(ctx, call, "retry", 1)
      if ("problem" in funded) return v.fail(funded.problem)
      const attemptedAt: Array<number> = []
      for (let n = 1; n <= FIRST_RETRY_DELAYS_MS.length + 1; n++) {
        const delay = FIRST_RETRY_DELAYS_MS[n - 2] ?? 0
        if (!(await arrivals(ctx, receiver.received, n, delay, delay + arrivalSlackMs(delay) + 10_000)))
          return v.fail(
            `attempt ${n} of the deposit.confirmed delivery never reached the receiver (${receiver.received().length} arrived; attempt ${n} is due ${delay / 1000} s after attempt ${n - 1})`
          )
        const record = await recordOf(ctx, call, hookId, n)
        if (record?.attempts !== n || record.deliveredAt === undefined)
          return v.fail(`GET /webhooks/${hookId}/deliveries shows ${record?.attempts ?? "no"} attempts once attempt ${n} arrived; expected ${n}`)
        attemptedAt.push(Date.parse(record.deliveredAt))
        v.note(`attempt ${n} received, answered ${receiver.received()[n - 1]?.answered}`, attemptedAt[n - 1] ?? 0, "delivery")
      }
      const got = receiver.received()
      const wrong = attemptProblem(secret, got) ?? scheduleProblem(attemptedAt, got, !ctx.target.hasControl)
      return wrong === undefined ? v.pass(`3 attempts, ${FIRST_RETRY_DELAYS_MS.map((d) => `${d / 1000} s`).join(" and ")} apart, one eventId`) : v.fail(wrong)
    } finally {
      await forgetWebhook(call, hookId)
      await receiver.close()
    }
  }
}

/**
 * The one delivery of the check's webhook as the target records it, once the record counts `attempts` (a target may
 * write an attempt's record just after sending it: a few short real pauses, about 2 s at most, before taking it).
 */
const recordOf = async (ctx: RunContext, call: Call, hookId: string, attempts: number): Promise<DeliveryRecord | undefined> => {
  let record: DeliveryRecord | undefined
  for (let i = 0; i < 10; i++) {
    const listed = await call("GET", `/webhooks/${hookId}/deliveries`)
    record = ((listed.json as { deliveries?: Array<DeliveryRecord> } | null)?.deliveries ?? [])[0]
    if ((record?.attempts ?? 0) >= attempts) return record
    await ctx.target.pause(200)
  }
  return record
}

/** The gaps between attempts against the spec's delays: on the target's clock (its record), then as received. */
const scheduleProblem = (attemptedAt: ReadonlyArray<number>, got: ReadonlyArray<Received>, timedArrivals: boolean): string | undefined => {
  for (const [i, delay] of FIRST_RETRY_DELAYS_MS.entries()) {
    const onTarget = (attemptedAt[i + 1] ?? 0) - (attemptedAt[i] ?? 0)
    if (Math.abs(onTarget - delay) > TARGET_SLACK_MS + delay / 20)
      return `attempt ${i + 2} ran ${onTarget / 1000} s after attempt ${i + 1} on the target's clock (GET /webhooks/{id}/deliveries); the spec's schedule says ${delay / 1000} s`
    const received = (got[i + 1]?.at ?? 0) - (got[i]?.at ?? 0)
    if (timedArrivals && Math.abs(received - delay) > arrivalSlackMs(delay))
      return `attempt ${i + 2} reached the receiver ${received / 1000} s after attempt ${i + 1}; the spec's schedule says ${delay / 1000} s`
  }
  return undefined
}
