/**
 * Every event the accounts family emits, as a webhook or the stream would carry it, validates against the
 * contract's event schema of its name (`KycUpdatedEvent`, `AccountFrozenEvent`, ...): payload fields, types and
 * nullability, including the optional local fields of deposits and the compliance override flag.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { Ajv2020 } from "ajv/dist/2020.js"
import addFormatsModule from "ajv-formats"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { parse } from "yaml"
import { eventsOf, partnerOf, type TraceEvent } from "./accounts-kit.ts"
import { startEngine } from "./harness.ts"

const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (ajv: Ajv2020) => void
const doc = parse(readFileSync(join(import.meta.dirname, "..", "..", "spec", "openapi.yaml"), "utf8")) as {
  components: { schemas: Record<string, { allOf?: Array<{ properties?: { event?: { const?: string } } }> }> }
}
const ID = "urn:sokoni:openapi"
const ajv = new Ajv2020({ strict: false, allErrors: true })
addFormats(ajv)
ajv.addSchema({ $id: ID, components: doc.components })

/** The contract's envelope schema of each event name. */
const schemaOf = (name: string) => {
  const entry = Object.entries(doc.components.schemas).find(([, s]) => s.allOf?.[1]?.properties?.event?.const === name)
  if (entry === undefined) throw new Error(`no event schema for ${name}`)
  return ajv.getSchema(`${ID}#/components/schemas/${entry[0]}`) ?? ajv.compile({ $ref: `${ID}#/components/schemas/${entry[0]}` })
}

/** What a delivery carries (events/event-log.ts envelopeOf) built from a trace line. */
const envelope = (e: TraceEvent & { eventId: string; timestamp: string }) => ({
  eventId: e.eventId,
  event: e.event,
  timestamp: e.timestamp,
  data: e.data,
  ...(e.partition.endsWith(":sandbox") ? { isSandbox: true } : {})
})

describe("accounts events against the contract", () => {
  let engine: ReturnType<typeof startEngine>
  let events: ReadonlyArray<TraceEvent>
  beforeAll(async () => {
    engine = startEngine()
    const p = await partnerOf(engine)
    const a = (await p.createUser("sandbox", { externalId: "ev-1" })).subAccountId
    await p.sb("POST", `/users/${a}/kyc`, { kycStatus: "REJECTED", rejectionCode: "DOC", rejectionReason: "Blurry" })
    await p.sb("POST", `/users/${a}/kyc`, { kycStatus: "VERIFIED", kycLevel: "FULL", reference: "r" })
    await engine.admin("POST", `/_sim/users/${a}/kyc`, { kycStatus: "PENDING" })
    await p.sb("POST", `/users/${a}/deposit`, { amount: 10, localCurrency: "KES", fxRate: 129.5 })
    await p.sb("POST", `/users/${a}/deposit`, { amount: 10 })
    await p.sb("POST", `/users/${a}/withdraw`, { amount: 20, localCurrency: "KES", localAmount: 2590 })
    await p.sb("POST", `/users/${a}/freeze`)
    await p.sb("POST", `/users/${a}/unfreeze`)
    await engine.admin("POST", `/_sim/users/${a}/freeze`, { frozen: true })
    await engine.admin("POST", `/_sim/users/${a}/freeze`, { frozen: false })
    await p.sb("DELETE", `/users/${a}`)
    await p.credit("production", 12.34)
    // a sub-account order's events
    const b = (await p.createUser()).subAccountId
    await p.verify(b)
    await p.deposit(b, 100)
    const q = (await p.sb("GET", `/quote/SCOM?side=BUY&quantity=5&subAccountId=${b}`)).body.quoteId
    const o = (await p.sb("POST", `/users/${b}/trade`, { symbol: "SCOM", type: "BUY", quantity: 5, quoteId: q })).body.orderId
    await engine.admin("POST", `/_sim/desk/orders/${o}/fill`, {})
    events = await eventsOf(engine)
  })
  afterAll(() => engine.dispose())

  it("emits each kind", () => {
    const names = new Set(events.map((e) => e.event))
    for (const name of [
      "kyc.updated",
      "deposit.confirmed",
      "withdraw.confirmed",
      "account.frozen",
      "account.closed",
      "wallet.credited",
      "order.pending",
      "order.filled",
      "trade.settled"
    ]) {
      expect(names.has(name), name).toBe(true)
    }
  })

  it("every one validates against its contract schema", () => {
    for (const e of events) {
      const validate = schemaOf(e.event)
      const body = envelope(e as TraceEvent & { eventId: string; timestamp: string })
      expect(validate(body), `${e.event}: ${ajv.errorsText(validate.errors)} in ${JSON.stringify(body)}`).toBe(true)
    }
  })

  it("the schemas can fail: a wrong payload is refused", () => {
    const bad = { eventId: "evt_1", event: "kyc.updated", timestamp: "2026-11-23T08:00:00.000Z", data: { subAccountId: "usr_1", kycStatus: "DONE" } }
    expect(schemaOf("kyc.updated")(bad)).toBe(false)
    const frozen = { eventId: "evt_1", event: "account.frozen", timestamp: "2026-11-23T08:00:00.000Z", data: { subAccountId: "usr_1", frozen: "yes" } }
    expect(schemaOf("account.frozen")(frozen)).toBe(false)
  })
})
