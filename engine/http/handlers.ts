/**
 * HTTP handlers of the partner API: read the request, call one application service, return its result.
 * Failures travel as defects to the gateway, which renders every one of them in the spec's envelope.
 */
import { Effect, Layer } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { MarketService } from "../app/market.ts"
import { CurrentPrincipal, type Principal } from "../app/principal.ts"
import { TradingService } from "../app/trading.ts"
import { fail } from "../domain/errors.ts"
import { PartnerApi } from "./api.ts"

/** The authenticated caller; the gateway guarantees one on every partner route. */
const principal: Effect.Effect<Principal> = Effect.flatMap(Effect.service(CurrentPrincipal), (p: Principal | undefined) =>
  p === undefined ? Effect.die(fail("AUTH_MISSING", "no API key was supplied")) : Effect.succeed(p)
)

/** Handlers have no typed errors: ApiFailures go to the gateway as defects, rendered there. */
const run = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.orDie(effect)

const MarketHandlers = HttpApiBuilder.group(PartnerApi, "market", (handlers) =>
  Effect.gen(function* () {
    const market = yield* MarketService
    return handlers
      .handle("listStocks", ({ query }) => run(Effect.flatMap(principal, (p) => market.listStocks(query, p.partition))))
      .handle("getQuote", ({ params, query }) => run(Effect.flatMap(principal, (p) => market.issueQuote(p, params.symbol, query))))
  })
)

const OrdersHandlers = HttpApiBuilder.group(PartnerApi, "orders", (handlers) =>
  Effect.gen(function* () {
    const trading = yield* TradingService
    return handlers
      .handle("trade", ({ payload }) => run(Effect.flatMap(principal, (p) => trading.trade(p, "master", payload))))
      .handle("listOrders", ({ query }) => run(Effect.flatMap(principal, (p) => trading.listOrders(p, "master", query))))
      .handle("getOrder", ({ params }) => run(Effect.flatMap(principal, (p) => trading.getOrder(p, params.orderId))))
  })
)

export const PartnerApiRoutes = HttpApiBuilder.layer(PartnerApi).pipe(Layer.provide([MarketHandlers, OrdersHandlers]))
