/**
 * Every route the engine serves, by family. Adding an endpoint: declare it in its family's module with its
 * operationId (docs/architecture.md, "Adding an endpoint"), and it is routed, guarded and typed from the contract.
 */
import type { CorporateService } from "../../app/corporate.ts"
import type { IntelService } from "../../app/intel.ts"
import type { MarketService } from "../../app/market.ts"
import type { OfferService } from "../../app/offers.ts"
import type { PartnerService } from "../../app/partners.ts"
import type { ReferenceService } from "../../app/reference.ts"
import type { TradingService } from "../../app/trading.ts"
import type { EngineClock } from "../../sim/clock.ts"
import type { Scheduler } from "../../sim/scheduler.ts"
import type { Trace } from "../../sim/trace.ts"
import type { Route } from "../route.ts"
import { controlRoutes } from "./control.ts"
import { marketDataRoutes } from "./market-data.ts"
import { orderRoutes } from "./orders.ts"
import { quoteRoutes } from "./quotes.ts"
import { referenceRoutes } from "./reference.ts"
import { statusRoutes } from "./status.ts"

/** The services route handlers may use. */
export type RouteServices =
  | MarketService
  | TradingService
  | PartnerService
  | ReferenceService
  | CorporateService
  | IntelService
  | OfferService
  | EngineClock
  | Scheduler
  | Trace

export const ROUTES: ReadonlyArray<Route<RouteServices>> = [
  ...marketDataRoutes,
  ...referenceRoutes,
  ...quoteRoutes,
  ...orderRoutes,
  ...statusRoutes,
  ...controlRoutes
]
