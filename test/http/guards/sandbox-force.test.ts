/**
 * The sandbox scenario headers as a pure unit: every branch of forcedFailure (nothing forced, status only, code
 * only, both, undeclared status, unknown code, a code whose status is not declared), allowedStatuses, and
 * Retry-After on forced 429 and 503.
 */
import { describe, expect, it } from "vitest"
import { ApiFailure, fail } from "../../../engine/domain/errors.ts"
import { DEFAULT_CODE, forcedFailure, forcedHeaders } from "../../../engine/http/guards/sandbox-force.ts"

const DECLARED = [200, 400, 401, 403, 404, 409, 422, 429, 500, 503]

describe("forcedFailure", () => {
  it("forces nothing without the headers", () => {
    expect(forcedFailure({}, DECLARED)).toBeUndefined()
    expect(forcedFailure({ "x-other": "1" }, DECLARED)).toBeUndefined()
  })

  it("a status alone answers with its default code", () => {
    for (const [status, code] of [
      [400, "VALIDATION_ERROR"],
      [401, "AUTH_INVALID"],
      [403, "FORBIDDEN"],
      [404, "NOT_FOUND"],
      [409, "CONFLICT"],
      [422, "MARKET_CLOSED"],
      [429, "RATE_LIMITED"],
      [500, "INTERNAL_ERROR"],
      [503, "SERVICE_UNAVAILABLE"]
    ] as const) {
      const f = forcedFailure({ "x-sandbox-force-status": ` ${status} ` }, DECLARED)
      expect(f).toBeInstanceOf(ApiFailure)
      expect(f?.code).toBe(code)
      expect(f?.httpStatus).toBe(status)
      expect(f?.message).toBe(`forced by the X-Sandbox-Force-* request headers (${code})`)
    }
    expect(DEFAULT_CODE[502]).toBe("WEBHOOK_TEST_FAILED")
  })

  it("a code alone answers with its own status when declared", () => {
    const f = forcedFailure({ "x-sandbox-force-error": " INSUFFICIENT_FUNDS " }, DECLARED)
    expect(f?.code).toBe("INSUFFICIENT_FUNDS")
    expect(f?.httpStatus).toBe(400)
    const m = forcedFailure({ "x-sandbox-force-error": "MAINTENANCE" }, DECLARED)
    expect(m?.httpStatus).toBe(503)
  })

  it("status and code together: the code with that status", () => {
    const f = forcedFailure({ "x-sandbox-force-status": "503", "x-sandbox-force-error": "MAINTENANCE" }, DECLARED)
    expect(f?.code).toBe("MAINTENANCE")
    expect(f?.httpStatus).toBe(503)
    const g = forcedFailure({ "x-sandbox-force-status": "409", "x-sandbox-force-error": "INSUFFICIENT_FUNDS" }, DECLARED)
    expect(g?.code).toBe("INSUFFICIENT_FUNDS")
    expect(g?.httpStatus).toBe(409)
  })

  it("refuses a status the operation does not declare, naming the forceable ones", () => {
    for (const raw of ["418", "200", "abc", "", "502"]) {
      const f = forcedFailure({ "x-sandbox-force-status": raw }, DECLARED)
      expect(f?.code).toBe("VALIDATION_ERROR")
      expect(f?.httpStatus).toBe(400)
      expect(f?.message).toBe("X-Sandbox-Force-Status must be one of 400, 401, 403, 404, 409, 422, 429, 500, 503 on this operation")
      expect(f?.extras).toEqual({ param: "X-Sandbox-Force-Status", allowedStatuses: [400, 401, 403, 404, 409, 422, 429, 500, 503] })
    }
  })

  it("leaves success and unmapped statuses out of the forceable ones", () => {
    const f = forcedFailure({ "x-sandbox-force-status": "201" }, [200, 201, 399, 400, 402, 404])
    expect(f?.extras).toEqual({ param: "X-Sandbox-Force-Status", allowedStatuses: [400, 404] })
  })

  it("refuses an unknown or lower-case code", () => {
    for (const raw of ["NOPE", "validation_error"]) {
      const f = forcedFailure({ "x-sandbox-force-error": raw }, DECLARED)
      expect(f?.code).toBe("VALIDATION_ERROR")
      expect(f?.message).toBe("X-Sandbox-Force-Error must be one of the contract's error codes (upper case)")
      expect(f?.extras).toEqual({ param: "X-Sandbox-Force-Error" })
    }
  })

  it("checks the status before the code", () => {
    const f = forcedFailure({ "x-sandbox-force-status": "418", "x-sandbox-force-error": "NOPE" }, DECLARED)
    expect(f?.extras?.param).toBe("X-Sandbox-Force-Status")
  })

  it("refuses a code whose own status the operation does not declare", () => {
    const f = forcedFailure({ "x-sandbox-force-error": "WEBHOOK_TEST_FAILED" }, [200, 400, 404])
    expect(f?.code).toBe("VALIDATION_ERROR")
    expect(f?.message).toBe("WEBHOOK_TEST_FAILED answers 502, which this operation does not declare; also send X-Sandbox-Force-Status (400, 404)")
    expect(f?.extras).toEqual({ param: "X-Sandbox-Force-Error" })
  })
})

describe("forcedHeaders", () => {
  it("adds Retry-After: 1 on 429 and 503 only", () => {
    expect(forcedHeaders(fail("RATE_LIMITED", "x"))).toEqual({ "retry-after": "1" })
    expect(forcedHeaders(fail("SERVICE_UNAVAILABLE", "x"))).toEqual({ "retry-after": "1" })
    expect(forcedHeaders(fail("INTERNAL_ERROR", "x"))).toEqual({})
    expect(forcedHeaders(fail("CONFLICT", "x"))).toEqual({})
    expect(forcedHeaders(new ApiFailure({ code: "CONFLICT", message: "x", status: 429 }))).toEqual({ "retry-after": "1" })
  })
})
