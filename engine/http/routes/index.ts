/**
 * Every route the engine serves, by family. Adding an endpoint: declare it in its family's module with its
 * operationId (docs/architecture.md, "Adding an endpoint"), and it is routed, guarded and typed from the contract.
 */
import type { ExecutionDesk } from "../../sim/desk.ts"
import type { AccountLifecycleService } from "../../app/account-lifecycle/service.ts"
import type { AuditTrail } from "../../app/audit.ts"
import type { UsageMeter } from "../../app/billing/usage-meter.ts"
import type { InvoiceService } from "../../app/billing/invoices.ts"
import type { ReportService } from "../../app/reports/service.ts"
import type { AccountsService } from "../../app/accounts.ts"
import type { DeviceService } from "../../app/devices/service.ts"
import type { CorporateService } from "../../app/corporate.ts"
import type { CorporateActions } from "../../app/corporate-actions/service.ts"
import type { Rights } from "../../app/corporate-actions/rights.ts"
import type { IntelService } from "../../app/intel.ts"
import type { MarketService } from "../../app/market.ts"
import type { MarketCalendarService } from "../../app/market-calendar.ts"
import type { MarketViews } from "../../app/market-views.ts"
import type { PortfolioService } from "../../app/portfolio.ts"
import type { OrderBlotter } from "../../app/blotter.ts"
import type { IncidentService } from "../../app/incidents/service.ts"
import type { PriceAlertService } from "../../app/price-alerts/service.ts"
import type { PricePins } from "../../app/price-pins.ts"
import type { PriceHistoryService } from "../../app/price-history.ts"
import type { OfferService } from "../../app/offers.ts"
import type { PartnerService } from "../../app/partners/service.ts"
import type { SandboxService } from "../../app/sandbox/service.ts"
import type { ReferenceService } from "../../app/reference.ts"
import type { TradingService } from "../../app/trading/service.ts"
import type { WalletService } from "../../app/wallets/service.ts"
import type { WebhookService } from "../../app/webhooks/service.ts"
import type { KeyService } from "../../app/keys/service.ts"
import type { IdentityProvider } from "../../app/identity.ts"
import type { PortalService } from "../../app/portal.ts"
import type { PortalAccountService } from "../../app/portal-account.ts"
import type { SettingsService } from "../../app/settings/service.ts"
import type { StreamService } from "../../app/stream.ts"
import type { SubscriptionService } from "../../app/subscriptions/service.ts"
import type { EngineClock } from "../../sim/clock.ts"
import type { Maintenance } from "../guards/maintenance.ts"
import type { Faults } from "../../sim/faults.ts"
import type { Scheduler } from "../../sim/scheduler.ts"
import type { Trace } from "../../sim/trace.ts"
import type { ReceiverScripts } from "../../app/receiver-scripts.ts"
import type { ConsoleView } from "../../app/console-view.ts"
import type { ConsoleFeed } from "../../events/console-feed.ts"
import type { EventLog } from "../../events/event-log.ts"
import type { EngineReset } from "../../sim/reset.ts"
import type { Findings } from "../../findings/findings.ts"
import type { Dialect } from "../dialect.ts"
import type { Route } from "../route.ts"
import { accountRoutes } from "./accounts.ts"
import { complianceRoutes } from "./control-accounts.ts"
import { consoleRoutes } from "./control-console.ts"
import { corporateControlRoutes } from "./control-corporate.ts"
import { marketControlRoutes } from "./control-market.ts"
import { controlRoutes } from "./control.ts"
import { faultControlRoutes } from "./control-faults.ts"
import { receiverControlRoutes } from "./control-receivers.ts"
import { findingsControlRoutes } from "./control-findings.ts"
import { marketCalendarRoutes } from "./market-calendar.ts"
import { marketDataRoutes } from "./market-data.ts"
import { marketViewRoutes } from "./market-views.ts"
import { priceAlertRoutes } from "./price-alerts.ts"
import { priceHistoryRoutes } from "./price-history.ts"
import { orderRoutes } from "./orders.ts"
import { quoteRoutes } from "./quotes.ts"
import { referenceRoutes } from "./reference.ts"
import { statusRoutes } from "./status.ts"
import { walletRoutes } from "./wallets.ts"
import { webhookRoutes } from "./webhooks.ts"
import { keyRoutes } from "./keys.ts"
import { portalControlRoutes } from "./control-portal.ts"
import { portalRoutes } from "./portal.ts"
import { settingsRoutes } from "./settings.ts"
import { streamRoutes } from "./stream.ts"
import { subscriptionControlRoutes, subscriptionRoutes } from "./subscriptions.ts"
import { platformRoutes } from "./platform.ts"

/** The services route handlers may use. */
export type RouteServices =
  | MarketService
  | MarketViews
  | MarketCalendarService
  | PortfolioService
  | OrderBlotter
  | IncidentService
  | PriceAlertService
  | PricePins
  | PriceHistoryService
  | TradingService
  | PartnerService
  | AccountsService
  | AccountLifecycleService
  | DeviceService
  | WalletService
  | SandboxService
  | WebhookService
  | SettingsService
  | StreamService
  | KeyService
  | PortalService
  | PortalAccountService
  | IdentityProvider
  | ReferenceService
  | CorporateService
  | CorporateActions
  | Rights
  | IntelService
  | OfferService
  | SubscriptionService
  | EngineClock
  | Scheduler
  | ExecutionDesk
  | Trace
  | ReceiverScripts
  | EngineReset
  | Findings
  | Dialect
  | Maintenance
  | Faults
  | AuditTrail
  | UsageMeter
  | ReportService
  | InvoiceService
  | ConsoleView
  | ConsoleFeed
  | EventLog

export const ROUTES: ReadonlyArray<Route<RouteServices>> = [
  ...marketDataRoutes,
  ...marketViewRoutes,
  ...priceHistoryRoutes,
  ...marketCalendarRoutes,
  ...priceAlertRoutes,
  ...referenceRoutes,
  ...quoteRoutes,
  ...orderRoutes,
  ...subscriptionRoutes,
  ...accountRoutes,
  ...walletRoutes,
  ...statusRoutes,
  ...webhookRoutes,
  ...streamRoutes,
  ...settingsRoutes,
  ...platformRoutes,
  ...keyRoutes,
  ...portalRoutes,
  ...portalControlRoutes,
  ...controlRoutes,
  ...faultControlRoutes,
  ...receiverControlRoutes,
  ...findingsControlRoutes,
  ...complianceRoutes,
  ...marketControlRoutes,
  ...corporateControlRoutes,
  ...subscriptionControlRoutes,
  ...consoleRoutes
]
