/**
 * Price-alert routes (contract tag "Price alerts"): create and delete on production with a full key, list and get on
 * both bases (D-053). Decoding only; the work is PriceAlertService's.
 */
import { Schema } from "effect"
import { PriceAlertService } from "../../app/price-alerts/service.ts"
import { integer, oneOf, optional, required, text } from "../query.ts"
import { partnerRoute } from "../route.ts"
import { PAGE } from "./market-data.ts"
import { maxCharacters } from "../body.ts"

export const CreatePriceAlertBody = Schema.Struct({
  symbol: Schema.String,
  exchange: Schema.String,
  condition: Schema.Literals(["above", "below"]),
  threshold: Schema.Number.check(Schema.isGreaterThan(0)),
  repeat: Schema.optionalKey(Schema.Boolean),
  clientAlertId: Schema.optionalKey(Schema.String.check(maxCharacters(64)))
})

const alertParam = { alertId: required(text) }

export const priceAlertRoutes = [
  partnerRoute("createPriceAlert", 201, {
    body: CreatePriceAlertBody,
    handle: ({ body, principal }) => PriceAlertService.use((a) => a.create(principal, body))
  }),
  partnerRoute("listPriceAlerts", 200, {
    query: { state: optional(oneOf(["ARMED", "TRIGGERED", "DISARMED"])), limit: optional(integer({ min: 1, max: 200 })), ...PAGE },
    handle: ({ query, principal }) => PriceAlertService.use((a) => a.list(principal, query))
  }),
  partnerRoute("getPriceAlert", 200, { params: alertParam, handle: ({ params, principal }) => PriceAlertService.use((a) => a.get(principal, params.alertId)) }),
  partnerRoute("deletePriceAlert", 200, {
    params: alertParam,
    handle: ({ params, principal }) => PriceAlertService.use((a) => a.remove(principal, params.alertId))
  })
]
