/**
 * The control API (`/_sim/...`, simulation mode only, admin bearer token): bootstrap partners, read and advance the
 * clock, drive the desk, read the trace. Scenarios and the conformance suite use it; it is not part of the partner
 * contract (spec/control.yaml describes it). Owns request parsing for these routes; the work is the services'.
 */
import { Effect, Schema } from "effect"
import { HttpServerResponse } from "effect/http"
import { PartnerService } from "../app/partners.ts"
import { TradingService } from "../app/trading.ts"
import { type ApiFailure, fail } from "../domain/errors.ts"
import { EngineClock, isoAt } from "../sim/clock.ts"
import { Scheduler } from "../sim/scheduler.ts"
import { Trace } from "../sim/trace.ts"

const PartnerBody = Schema.Struct({
  businessName: Schema.String.check(Schema.isMinLength(2)),
  email: Schema.String.check(Schema.isPattern(/^[^@\s]+@[^@\s]+\.[^@\s]+$/)),
  tier: Schema.optionalKey(Schema.Literals(["starter", "growth", "enterprise"])),
  markupBps: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 1000 })))
})
const CreditBody = Schema.Struct({ environment: Schema.Literals(["sandbox", "production"]), amount: Schema.Number })
const AdvanceBody = Schema.Struct({ seconds: Schema.optionalKey(Schema.Number), to: Schema.optionalKey(Schema.String) })
const FillBody = Schema.Struct({ price: Schema.optionalKey(Schema.Number), quantity: Schema.optionalKey(Schema.Int) })
const RejectBody = Schema.Struct({ rejectionCode: Schema.String.check(Schema.isMinLength(1)), rejectionReason: Schema.String.check(Schema.isMinLength(1)) })

const decodeBody = <S extends Schema.Top & { readonly DecodingServices: never }>(schema: S, text: string) =>
  Effect.try({
    try: () => (text.trim() === "" ? {} : (JSON.parse(text) as unknown)),
    catch: () => fail("VALIDATION_ERROR", "the request body is not valid JSON")
  }).pipe(
    Effect.flatMap((json) => Schema.decodeUnknownEffect(schema)(json)),
    Effect.mapError(
      (e): ApiFailure =>
        "_tag" in e && e._tag === "ApiFailure" ? (e as ApiFailure) : fail("VALIDATION_ERROR", String(e.message).split("\n")[0] ?? "invalid body")
    )
  )

const json = (body: unknown, status = 200) => HttpServerResponse.jsonUnsafe(body, { status })

export const handleControl = Effect.fn("Control.handle")(function* (method: string, path: string, body: string) {
  const partners = yield* PartnerService
  const trading = yield* TradingService
  const clock = yield* EngineClock
  const scheduler = yield* Scheduler
  const trace = yield* Trace
  const route = `${method} ${path}`
  const desk = /^\/_sim\/desk\/orders\/([^/]+)\/(fill|reject)$/.exec(path)

  if (route === "POST /_sim/partners") {
    const input = yield* decodeBody(PartnerBody, body)
    return json(yield* partners.bootstrap({ ...input, tier: input.tier ?? "starter" }), 201)
  }
  const credit = /^\/_sim\/partners\/([^/]+)\/wallet\/credit$/.exec(path)
  if (credit !== null && method === "POST") {
    const input = yield* decodeBody(CreditBody, body)
    return json(yield* partners.creditMaster(decodeURIComponent(credit[1] ?? ""), input.environment, input.amount))
  }
  if (route === "GET /_sim/clock") return json({ now: isoAt(yield* clock.now), mode: clock.mode })
  if (route === "POST /_sim/clock/advance") {
    const input = yield* decodeBody(AdvanceBody, body)
    const to = input.to === undefined ? undefined : Date.parse(input.to)
    if (to !== undefined && Number.isNaN(to)) return yield* Effect.fail(fail("VALIDATION_ERROR", "`to` must be an ISO 8601 date-time", { param: "to" }))
    const result = yield* scheduler.advance({ seconds: input.seconds, to })
    return json({ now: isoAt(result.now), jobsRun: result.jobsRun })
  }
  if (route === "GET /_sim/desk/queue") return json({ orders: yield* trading.deskQueue })
  if (desk !== null && method === "POST") {
    const orderId = decodeURIComponent(desk[1] ?? "")
    if (desk[2] === "fill") return json(yield* trading.deskFill(orderId, yield* decodeBody(FillBody, body)))
    const input = yield* decodeBody(RejectBody, body)
    return json(yield* trading.deskReject(orderId, input.rejectionCode, input.rejectionReason))
  }
  if (route === "GET /_sim/trace") {
    const lines = yield* trace.lines
    return HttpServerResponse.text(lines.map((l) => `${l}\n`).join(""), { contentType: "application/x-ndjson" })
  }
  if (route === "GET /_sim/trace/hash") return json(yield* trace.hash)
  return yield* Effect.fail(fail("NOT_FOUND", `no control route ${route}`))
})
