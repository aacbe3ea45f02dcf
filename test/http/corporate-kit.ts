/**
 * Shared set-up of the corporate-action HTTP tests: a partner whose two sandbox sub-accounts hold SCOM.KE, and the
 * check of every event payload against its schema in spec/openapi.yaml.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { Ajv2020 } from "ajv/dist/2020.js"
import addFormatsModule from "ajv-formats"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { parse } from "yaml"
import { rateFor } from "../../engine/domain/fx.ts"
import { parseScaled } from "../../engine/domain/money.ts"
import { partnerOf, type TraceEvent } from "./accounts-kit.ts"
import { startEngine } from "./harness.ts"
import { adminUrl, withDatabase } from "./node-server-kit.ts"
import { tagsFor } from "../support/stores.ts"

export type Engine = ReturnType<typeof startEngine>

const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (ajv: Ajv2020) => void
const doc = parse(readFileSync(join(import.meta.dirname, "..", "..", "spec", "openapi.yaml"), "utf8")) as {
  components: { schemas: Record<string, { allOf?: Array<{ properties?: { event?: { const?: string }; data?: { $ref?: string } } }> }> }
}
const ID = "urn:sokoni:openapi"
const ajv = new Ajv2020({ strict: false, allErrors: true })
addFormats(ajv)
ajv.addSchema({ $id: ID, components: doc.components })
/** The payload schema of an event, from its envelope in the contract. */
const dataSchemaOf = (name: string) => {
  const envelope = Object.values(doc.components.schemas).find((s) => s.allOf?.[1]?.properties?.event?.const === name)
  const ref = envelope?.allOf?.[1]?.properties?.data?.$ref
  if (ref === undefined) throw new Error(`no payload schema for ${name}`)
  return ajv.getSchema(`${ID}${ref}`) ?? ajv.compile({ $ref: `${ID}${ref}` })
}
export const expectValid = (events: ReadonlyArray<TraceEvent>) => {
  for (const e of events) {
    const validate = dataSchemaOf(e.event)
    expect(validate(e.data), `${e.event}: ${ajv.errorsText(validate.errors)}`).toBe(true)
  }
}

export const KES = rateFor("KES") as number
/** USD cents of `units` x `localPrice` KES, rounded half up, worked out apart from the engine's helpers. */
export const kesToCents = (units: number, localPrice: number) => {
  const p4 = BigInt(parseScaled(localPrice, 4) as number)
  const num = BigInt(units) * p4 * 1_000_000n * 100n
  const den = BigInt(KES) * 10_000n
  return Number((num * 2n + den) / (2n * den))
}
export const cents = (wire: number) => Math.round(wire * 100)

/** A partner with two funded, verified sandbox sub-accounts holding SCOM.KE (100 and 7 units), fills by the desk. */
export const setUp = async (engine: Engine) => {
  const p = await partnerOf(engine)
  const account = async (externalId: string) => {
    const id = (await p.createUser("sandbox", { externalId })).subAccountId
    await p.verify(id)
    await p.deposit(id, 500)
    return id
  }
  const a = await account("holder-a")
  const b = await account("holder-b")
  const order = async (id: string, symbol: string, side: "BUY" | "SELL", quantity: number) => {
    const q = await p.sb("GET", `/quote/${symbol}?side=${side}&quantity=${quantity}&subAccountId=${id}`)
    expect(q.status).toBe(200)
    return p.sb("POST", `/users/${id}/trade`, { symbol, type: side, quantity, quoteId: q.body.quoteId })
  }
  const buyFilled = async (id: string, symbol: string, quantity: number) => {
    const placed = await order(id, symbol, "BUY", quantity)
    expect(placed.status).toBe(202)
    expect((await engine.admin("POST", `/_sim/desk/orders/${placed.body.orderId}/fill`, {})).status).toBe(200)
  }
  await buyFilled(a, "SCOM.KE", 100)
  await buyFilled(b, "SCOM.KE", 7)
  const wallet = async (id: string) => cents((await p.sb("GET", `/users/${id}`)).body.walletBalance)
  const position = async (id: string, symbol: string) =>
    ((await p.sb("GET", `/users/${id}/portfolio`)).body.holdings as Array<any>).find((h) => h.symbol === symbol)
  const raise = (body: Record<string, unknown>) => engine.admin("POST", "/_sim/corporate-actions", body)
  return { p, a, b, order, buyFilled, wallet, position, raise }
}

type Flow = (engine: Engine) => Promise<void>

/**
 * Runs each named flow on a fresh memory engine, and, with DATABASE_URL, on a fresh engine over a temporary
 * PostgreSQL database of its own (the first `onPostgres` flows only, when given).
 */
export const describeOnBothStores = (title: string, flows: ReadonlyArray<readonly [string, Flow]>, onPostgres = flows.length) => {
  describe(`${title}`, () => {
    let engine: Engine
    beforeEach(() => {
      engine = startEngine()
    })
    afterEach(() => engine.dispose())
    for (const [name, flow] of flows) it(name, () => flow(engine))
  })
  describe.skipIf(adminUrl === undefined)(`${title} on postgres${adminUrl === undefined ? " (skipped: set DATABASE_URL)" : ""}`, tagsFor("postgres"), () => {
    for (const [name, flow] of flows.slice(0, onPostgres)) {
      it(name, async () => {
        await withDatabase(adminUrl ?? "", async (databaseUrl) => {
          const engine = startEngine({ databaseUrl })
          try {
            await flow(engine)
          } finally {
            await engine.dispose()
          }
        })
      }, 120_000)
    }
  })
}
