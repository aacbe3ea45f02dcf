/**
 * Every delivery the receiver check can build validates against the contract's envelope schema of its event
 * (spec/openapi.yaml, e.g. OrderPendingEvent), and an order's events agree on the order.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { Ajv2020 } from "ajv/dist/2020.js"
import addFormatsModule from "ajv-formats"
import { describe, expect, it } from "vitest"
import { parse } from "yaml"
import { CHECKABLE_EVENTS, isCheckableEvent, makeEventFactory } from "../../engine/conform/receiver-events.ts"

const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (ajv: Ajv2020) => void
const doc = parse(readFileSync(join(import.meta.dirname, "..", "..", "spec", "openapi.yaml"), "utf8")) as {
  components: { schemas: Record<string, { allOf?: Array<{ properties?: { event?: { const?: string } } }> }> }
}
const ID = "urn:sokoni:openapi"
const ajv = new Ajv2020({ strict: false, allErrors: true })
addFormats(ajv)
ajv.addSchema({ $id: ID, components: doc.components })
const schemaOf = (name: string) => {
  const entry = Object.entries(doc.components.schemas).find(([, s]) => s.allOf?.[1]?.properties?.event?.const === name)
  if (entry === undefined) throw new Error(`no event schema for ${name}`)
  return ajv.getSchema(`${ID}#/components/schemas/${entry[0]}`) ?? ajv.compile({ $ref: `${ID}#/components/schemas/${entry[0]}` })
}

describe("receiver-check deliveries", () => {
  it.each([1, 7, 123456789])("validate against the contract's event schemas (seed %i)", (seed) => {
    const factory = makeEventFactory(seed)
    for (const [i, event] of CHECKABLE_EVENTS.entries()) {
      const { envelope, body } = factory.next(event, Date.UTC(2026, 0, 5, 9, 30) + i * 1000, i % 3)
      const validate = schemaOf(event)
      expect(validate(JSON.parse(body)), `${event}: ${ajv.errorsText(validate.errors)} in ${body}`).toBe(true)
      expect(JSON.parse(body)).toEqual(envelope)
    }
  })

  it("the schemas can refuse: a payload without its orderId fails", () => {
    const { envelope } = makeEventFactory(1).next("order.filled", 0)
    const { orderId: _, ...data } = envelope.data
    expect(schemaOf("order.filled")({ ...envelope, data })).toBe(false)
  })

  it("one order's pending and filled events agree on the order and its amounts", () => {
    const factory = makeEventFactory(42)
    const pending = factory.next("order.pending", 0, 3).envelope.data
    const filled = factory.next("order.filled", 60_000, 3).envelope.data
    for (const key of ["orderId", "symbol", "quantity", "priceAtOrder", "totalCost"]) expect(filled[key]).toEqual(pending[key])
    expect(factory.order(3).orderId).toBe(pending.orderId)
    expect(factory.order(4).orderId).not.toBe(pending.orderId)
    // total cost is gross plus fee, to the cent
    expect(Math.round(Number(pending.totalCost) * 100)).toBe(Math.round(Number(pending.gross) * 100) + Math.round(Number(pending.fee) * 100))
  })

  it("names only catalogue events", () => {
    expect(isCheckableEvent("order.filled")).toBe(true)
    expect(isCheckableEvent("order.exploded")).toBe(false)
  })
})
