/**
 * The engine's request validator against the contract it is generated from (E-310..E-313): every operation's inputs
 * compile; whatever body arrives, a refusal is one of the spec's three request-shape codes naming a field of the
 * schema; and a body the contract itself accepts (compiled here straight from spec/openapi.yaml) is never refused,
 * since the engine only ever relaxes a schema for the domain to answer (E-312).
 */
import { readFileSync } from "node:fs"
import { Ajv2020 } from "ajv/dist/2020.js"
import addFormatsModule from "ajv-formats"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { parse } from "yaml"
import { compileAllInputs, contractValidator } from "../../engine/contract/request-validator.ts"
import { CONTROL_INPUTS, PARTNER_INPUTS } from "../../engine/contract/requests.gen.ts"
import { CONTRACT_PATH } from "../../spec/validator.ts"

const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (ajv: Ajv2020) => void

const TRADE_FIELDS = [
  "symbol",
  "exchange",
  "type",
  "orderType",
  "quantity",
  "cashValue",
  "quoteId",
  "limitPrice",
  "stopPrice",
  "timeInForce",
  "expiresAt",
  "clientOrderId"
]
const REQUEST_SHAPE = new Set(["VALIDATION_ERROR", "MISSING_PARAM", "INVALID_TYPE"])

/** The contract's own TradeRequest, compiled without the engine's generator in between. */
const contractTradeRequest = () => {
  const ajv = new Ajv2020({ strict: false, validateSchema: false, validateFormats: true })
  addFormats(ajv)
  ajv.addSchema(parse(readFileSync(CONTRACT_PATH, "utf8")), "contract")
  return ajv.compile({ $ref: "contract#/components/schemas/TradeRequest" })
}

/** Each field: a value of the contract's kind, or one of the kinds it refuses (wrong type, empty, out of range). */
const fieldValue = fc.oneof(
  fc.constantFrom("SCOM.KE", "BUY", "SELL", "MARKET", "LIMIT", "GTD", "DAY", "NSE", "2027-01-05T09:30:00Z", "x", "", "😀".repeat(64), "😀".repeat(65)),
  fc.integer({ min: -2, max: 1_000 }),
  fc.double({ min: -1, max: 1e6, noNaN: true }),
  fc.constantFrom(null, true, [], {})
)
const tradeBody = fc.dictionary(fc.constantFrom(...TRADE_FIELDS, "extra"), fieldValue, { maxKeys: 8 })

describe("the contract's request schemas, as the engine compiles them", () => {
  it("compile for every operation of both documents", () => {
    expect(compileAllInputs()).toBe(Object.keys(PARTNER_INPUTS).length + Object.keys(CONTROL_INPUTS).length)
  })

  it("refuse a trade body only with a request-shape code naming a field, and never refuse what the contract accepts", () => {
    const engine = contractValidator("partner", "placeTrade")
    const contract = contractTradeRequest()
    fc.assert(
      fc.property(tradeBody, (body) => {
        const failure = engine.checkBody(body)
        if (contract(body)) expect(failure, JSON.stringify(body)).toBeUndefined()
        if (failure === undefined) return
        expect(REQUEST_SHAPE.has(failure.code), failure.message).toBe(true)
        const named = [failure.extras?.param, ...(failure.extras?.params ?? [])].filter((n) => n !== undefined)
        expect(named.length, failure.message).toBeGreaterThan(0)
        for (const name of named) expect(TRADE_FIELDS, failure.message).toContain(name)
      }),
      { numRuns: 500 }
    )
  })

  it("reads a query value as the contract types it: a non-number limit is INVALID_TYPE, out of range VALIDATION_ERROR", () => {
    const list = contractValidator("partner", "listOrders")
    const query = (limit: string) => list.parameters((place, name) => (place === "query" && name === "limit" ? limit : undefined))
    expect([query("abc")?.code, query("201")?.code, query("0")?.code, query("200")]).toEqual([
      "INVALID_TYPE",
      "VALIDATION_ERROR",
      "VALIDATION_ERROR",
      undefined
    ])
    expect(query("201")?.message).toBe("limit must be at most 200, got 201")
  })

  it("never echoes a secret in a refusal", () => {
    const failure = contractValidator("partner", "createWebhook").checkBody({ url: "https://h.test/x", events: ["order.filled"], secret: "hunter2" })
    expect([failure?.code, failure?.extras?.param]).toEqual(["VALIDATION_ERROR", "secret"])
    expect(failure?.message).not.toContain("hunter2")
  })
})
