/**
 * Control routes of the market feed (spec/control.yaml, tag "Market"): setting a listing's exchange price now, shown
 * by the API after the 15-minute delay (D-240). Decoding only; the work is PricePins' (and the MarketFeed's).
 */
import { Schema } from "effect"
import { PricePins } from "../../app/price-pins.ts"
import { required, text } from "../query.ts"
import { controlRoute } from "../route.ts"

const PriceBody = Schema.Struct({ price: Schema.Number.check(Schema.isGreaterThan(0)) })

export const marketControlRoutes = [
  controlRoute("setSimMarketPrice", 200, {
    params: { symbol: required(text) },
    body: PriceBody,
    handle: ({ params, body }) => PricePins.use((p) => p.setPrice(params.symbol, body.price))
  })
]
