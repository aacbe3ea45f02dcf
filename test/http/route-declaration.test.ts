/**
 * engine/http/route.ts: declared routes take everything but the handler from the contract: method, path, mount,
 * credential kind from `security`, environments, the Idempotency-Key rule, data-key access and the declared statuses;
 * and decode params, then query, then body.
 */
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import type { ApiFailure } from "../../engine/domain/errors.ts"
import type { EngineRequest } from "../../engine/http/exchange.ts"
import { required, text } from "../../engine/http/query.ts"
import { controlRoute, partnerRoute, publicRoute, RawBody } from "../../engine/http/route.ts"
import { controlRoutes } from "../../engine/http/routes/control.ts"
import { TradeBody } from "../../engine/http/routes/orders.ts"

const stub = () => Effect.succeed({} as never)
const request = (init: Partial<EngineRequest> = {}): EngineRequest => ({
  method: "GET",
  path: "/",
  query: new URLSearchParams(),
  search: "",
  headers: {},
  body: undefined,
  ...init
})

describe("route declaration from the contract", () => {
  it("placeTrade: an API-key mutation that needs an Idempotency-Key, not for data keys", () => {
    const r = partnerRoute("placeTrade", 202, { body: TradeBody, handle: stub })
    expect(r).toMatchObject({ operationId: "placeTrade", method: "POST", path: "/trade", mount: "partner", auth: "apiKey", successStatus: 202 })
    expect(r.idempotent).toBe(true)
    expect(r.dataKeyAllowed).toBe(false)
    expect([...r.environments].sort()).toEqual(["production", "sandbox"])
    expect(r.statuses).toContain(202)
    expect(r.statuses).toContain(400)
  })

  it("listStocks: a GET data keys may call, no Idempotency-Key", () => {
    const r = partnerRoute("listStocks", 200, { handle: stub })
    expect(r.auth).toBe("apiKey")
    expect(r.dataKeyAllowed).toBe(true)
    expect(r.idempotent).toBe(false)
  })

  it("getServiceStatus: no security is auth none", () => {
    const r = publicRoute("getServiceStatus", 200, { handle: stub })
    expect(r).toMatchObject({ auth: "none", mount: "public", idempotent: false, dataKeyAllowed: false })
    expect(r.environments).toEqual(["production"])
  })

  it("idToken and clientSecret operations, exempt from the Idempotency-Key", () => {
    const apply = partnerRoute("applyForPartnerAccess", 201, { handle: stub })
    expect(apply.auth).toBe("idToken")
    expect(apply.idempotent).toBe(false)
    const token = partnerRoute("issueOAuthToken", 200, { handle: stub })
    expect(token.auth).toBe("clientSecret")
    expect(token.idempotent).toBe(false)
    const reset = partnerRoute("resetSandbox", 200, { handle: stub })
    expect(reset.auth).toBe("apiKey")
    expect(reset.method).toBe("POST")
    expect(reset.idempotent).toBe(false)
  })

  it("control operations take the admin token and never an Idempotency-Key", () => {
    const create = controlRoutes.find((r) => r.operationId === "createSimPartner")
    expect(create).toMatchObject({ method: "POST", path: "/_sim/partners", mount: "control", auth: "admin", idempotent: false, successStatus: 201 })
    const clock = controlRoute("getSimClock", 200, { handle: () => Effect.succeed(new RawBody("text/plain", "x")) })
    expect(clock.auth).toBe("admin")
  })

  it("refuses an operationId the contract does not name", () => {
    expect(() => partnerRoute("noSuchOperation" as "listStocks", 200, { handle: stub })).toThrow(
      "noSuchOperation is not an operation of the contract (run npm run spec:gen?)"
    )
  })

  it("decodes params, then query, then body, stopping at the first failure", () => {
    const r = partnerRoute("placeTrade", 202, {
      params: { id: required(text) },
      query: { q: required(text) },
      body: TradeBody,
      handle: stub
    })
    const missingParam = r.decode(request({ query: new URLSearchParams("q=") }), {}) as ApiFailure
    expect(missingParam.code).toBe("MISSING_PARAM")
    expect(missingParam.extras).toEqual({ param: "id" })
    const badQuery = r.decode(request({ query: new URLSearchParams("q="), body: "not json" }), { id: "1" }) as ApiFailure
    expect(badQuery.code).toBe("VALIDATION_ERROR")
    expect(badQuery.extras).toEqual({ param: "q" })
    const badJson = r.decode(request({ query: new URLSearchParams("q=x"), body: "not json" }), { id: "1" }) as ApiFailure
    expect(badJson.message).toBe("the request body is not valid JSON")
    const badBody = r.decode(request({ query: new URLSearchParams("q=x"), body: "{}" }), { id: "1" }) as ApiFailure
    expect(badBody.httpStatus).toBe(400)
    const ok = r.decode(request({ query: new URLSearchParams("q=x"), body: '{"symbol":"SCOM","type":"BUY","quantity":1,"quoteId":"q1"}' }), { id: "1" })
    expect(ok).toMatchObject({ params: { id: "1" }, query: { q: "x" }, body: { symbol: "SCOM", type: "BUY", quantity: 1 } })
  })

  it("a route without a body schema ignores the body", () => {
    const r = partnerRoute("listStocks", 200, { handle: stub })
    expect(r.decode(request({ body: "not json" }), {})).toEqual({ params: {}, query: {}, body: undefined })
  })
})
