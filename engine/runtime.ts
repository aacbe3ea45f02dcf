/**
 * Composition root: builds the whole engine (seams, services, gateway) from one configuration, and offers the
 * in-process way in (Web Request -> Response) for scenarios and tests; the Node server is http/node-server.ts.
 * Owns wiring only. The seed and the clock's start are the run's identity: same config = same behaviour.
 */
import { Effect, Layer, Logger, ManagedRuntime, Stream } from "effect"
import { AccountLifecycleService } from "./app/account-lifecycle/service.ts"
import { AccountsService } from "./app/accounts.ts"
import { AuditTrail } from "./app/audit.ts"
import { UsageMeter } from "./app/billing/usage-meter.ts"
import { Listings } from "./app/listings.ts"
import { Symbols } from "./app/symbols.ts"
import { Rights } from "./app/corporate-actions/rights.ts"
import { CorporateActions } from "./app/corporate-actions/service.ts"
import { InvoiceService } from "./app/billing/invoices.ts"
import { ReportService } from "./app/reports/service.ts"
import { DeviceService } from "./app/devices/service.ts"
import { CorporateService } from "./app/corporate.ts"
import { MarketViews } from "./app/market-views.ts"
import { MarketCalendarService } from "./app/market-calendar.ts"
import { PortfolioService } from "./app/portfolio.ts"
import { OrderBlotter } from "./app/blotter.ts"
import { IncidentService } from "./app/incidents/service.ts"
import { PriceAlertService } from "./app/price-alerts/service.ts"
import { PricePins } from "./app/price-pins.ts"
import { PriceHistoryService } from "./app/price-history.ts"
import { IntelService } from "./app/intel.ts"
import { MarketService } from "./app/market.ts"
import { OfferService } from "./app/offers.ts"
import { PartnerService } from "./app/partners/service.ts"
import { ReceiverScripts } from "./app/receiver-scripts.ts"
import { SandboxService } from "./app/sandbox/service.ts"
import { ReferenceService } from "./app/reference.ts"
import { ReferenceData } from "./app/reference-data.ts"
import { TradingService } from "./app/trading/service.ts"
import { WalletService } from "./app/wallets/service.ts"
import { WebhookService } from "./app/webhooks/service.ts"
import { ConsoleView } from "./app/console-view.ts"
import { ConsoleFeed } from "./events/console-feed.ts"
import { EventLog } from "./events/event-log.ts"
import { WebhookDelivery } from "./events/webhook-delivery.ts"
import type { EngineRequest, EngineResponse } from "./http/exchange.ts"
import { Findings } from "./findings/findings.ts"
import { Gateway } from "./http/gateway.ts"
import { Dialect, type DialectName, signatureHeadersFor } from "./http/dialect.ts"
import { Idempotency } from "./http/guards/idempotency.ts"
import { Maintenance } from "./http/guards/maintenance.ts"
import { RateLimiter, WINDOW_MS } from "./http/guards/rate-limit.ts"
import { ROUTES } from "./http/routes/index.ts"
import { type ClockMode, EngineClock } from "./sim/clock.ts"
import { type DeskMode, ExecutionDesk } from "./sim/desk.ts"
import { MarketFeed } from "./sim/market-feed.ts"
import { Outbound, Receivers, type SimReceivers } from "./sim/outbound.ts"
import { EngineReset } from "./sim/reset.ts"
import { Faults } from "./sim/faults.ts"
import type { FaultPlan } from "./domain/faults.ts"
import { Entropy } from "./sim/random.ts"
import { Scheduler } from "./sim/scheduler.ts"
import { Trace } from "./sim/trace.ts"
import { admittingOneMore, type PlantedDefect, plantedDefectsLayer } from "./sim/defects.ts"
import { MemoryStoreLayer, type MemoryStoreOptions, memoryStoreLayer } from "./store/memory.ts"
import { KeyService } from "./app/keys/service.ts"
import { IdentityProvider } from "./app/identity.ts"
import { PortalService } from "./app/portal.ts"
import { PortalAccountService } from "./app/portal-account.ts"
import { SettingsService } from "./app/settings/service.ts"
import { StreamService } from "./app/stream.ts"
import { SubscriptionService } from "./app/subscriptions/service.ts"
import { Store, StoreError } from "./store/port.ts"
import { PostgresClientLayer, PostgresStoreLayer, PostgresStoreOnClient } from "./store/postgres.ts"

export interface EngineConfig {
  readonly store: "memory" | "postgres"
  readonly databaseUrl?: string | undefined
  readonly clock: ClockMode
  /** Epoch ms the clock starts at (follow and manual); defaults to the real time. */
  readonly start?: number | undefined
  readonly seed: number
  readonly desk: DeskMode
  readonly deskDelaySeconds?: number | undefined
  /** Enables the control API under /_sim. */
  readonly adminToken?: string | undefined
  /** `off` lifts tier limits (benchmarks); headers are still sent. Default `on`. */
  readonly rateLimit?: "on" | "off" | undefined
  /** Length of the rate-limit window, default the contract's 60 s; load profiles compress it (E-078). */
  readonly rateWindowMs?: number | undefined
  /** How the trace is kept: every line (scenarios, the default), none, or the last N lines (serve). */
  readonly trace?: Layer.Layer<Trace, unknown> | undefined
  /**
   * How webhooks reach their endpoints: by default `Outbound.routed` (the URLs scripted through `PUT /_sim/receivers`
   * answer from `receivers`, every other URL goes to the network), or e.g. `Outbound.simulated(receivers)` (tests,
   * scenarios: every URL simulated).
   */
  readonly outbound?: Layer.Layer<Outbound, never, EngineClock | Receivers> | undefined
  /** The simulated receivers the control API scripts and reads (`/_sim/receivers`); a fresh set by default. */
  readonly receivers?: SimReceivers | undefined
  /** More header names carrying the webhook signature, e.g. x-mystocks-signature (facts row 11.2, D-054). */
  readonly webhookSignatureHeaders?: ReadonlyArray<string> | undefined
  /** The rules the gateway applies: the spec's (default) or the public service's leniencies (http/dialect.ts, E-361). */
  readonly dialect?: DialectName | undefined
  /** The `retry:` a stream opens with, default the contract's 3000 ms; tests that reconnect often shorten it (E-134). */
  readonly streamRetryMs?: number | undefined
  /** Who can start this engine over (`POST /_sim/reset`): its host (http/engine-host.ts); nobody by default (E-242). */
  readonly reset?: EngineReset["Service"] | undefined
  /** The fault plan in force from the start (`serve --faults FILE`, docs/faults.md); none by default. */
  readonly faults?: FaultPlan | undefined
  /** TEST ONLY (E-190): faults the conformance harness must catch by name (`serve --plant-defect`); none by default. */
  readonly plantDefects?: ReadonlyArray<PlantedDefect> | undefined
  /**
   * TEST ONLY: where the engine's log lines go instead of Effect's default logger (the console), so that a test that
   * provokes an error log on purpose can capture and assert it (test/support/engine-log.ts). Unset everywhere else.
   */
  readonly logger?: Logger.Logger<unknown, unknown> | undefined
  /**
   * TEST ONLY (E-290): the memory store's committed state to start from (an engine "restarted" after a simulated
   * crash keeps it) and the crashes injected around its commits. A fresh state and no crashes by default.
   */
  readonly memory?: MemoryStoreOptions | undefined
}

export const storeLayer = (config: EngineConfig): Layer.Layer<Store, StoreError> => {
  if (config.store === "memory") return config.memory === undefined ? MemoryStoreLayer : memoryStoreLayer(config.memory)
  if (config.databaseUrl === undefined)
    return Layer.effect(Store, Effect.fail(new StoreError({ message: "--store postgres needs --database-url (or DATABASE_URL)" })))
  return PostgresStoreLayer(config.databaseUrl) as Layer.Layer<Store, StoreError>
}

/**
 * The store and the rate limiter, which share their backend: in process with the memory store, in the database with
 * postgres (one pool for both), so every engine process on one database shares the windows (E-077).
 */
export const backendLayer = (config: EngineConfig): Layer.Layer<Store | RateLimiter, StoreError> => {
  const off = config.rateLimit === "off"
  const windowMs = config.rateWindowMs ?? WINDOW_MS
  const plusOne = config.plantDefects?.includes("rate-limit-plus-one") === true
  const limiter = <E, R>(real: Layer.Layer<RateLimiter, E, R>) => (plusOne ? admittingOneMore(real) : real)
  if (config.store === "memory" || config.databaseUrl === undefined)
    return Layer.mergeAll(storeLayer(config), off ? RateLimiter.layerOff : limiter(RateLimiter.layerWith(windowMs)))
  const onClient = Layer.mergeAll(PostgresStoreOnClient, off ? RateLimiter.layerOff : limiter(RateLimiter.layerPostgresWith(windowMs)))
  return onClient.pipe(Layer.provide(PostgresClientLayer(config.databaseUrl)))
}

/** Every service of the engine, gateway included. */
export const engineLayer = (config: EngineConfig) => {
  const backend = backendLayer(config)
  const dialect = config.dialect ?? "spec"
  const signatureHeaders = signatureHeadersFor(dialect, config.webhookSignatureHeaders)
  const seams = Layer.mergeAll(
    backend,
    EngineClock.layerDurable(config.clock, config.start).pipe(Layer.provide(backend)),
    Entropy.layerDurable(config.seed).pipe(Layer.provide(backend)),
    config.trace ?? Trace.layer,
    Maintenance.layer,
    ConsoleFeed.layer,
    Receivers.layer(config.receivers),
    config.reset === undefined ? EngineReset.unavailable : EngineReset.layer(config.reset),
    plantedDefectsLayer(config.plantDefects ?? [])
  )
  const withOutbound = Layer.provideMerge(config.outbound ?? Outbound.routed, seams)
  // Findings are stamped by the clock and recorded from the gateway and anything under it.
  const withFeed = Layer.provideMerge(Layer.mergeAll(MarketFeed.layer(config.seed), Findings.layer), withOutbound)
  const withScheduler = Layer.provideMerge(Scheduler.layer, withFeed)
  const withFaults = Layer.provideMerge(Faults.layer(config.faults), withScheduler)
  const withEvents = Layer.provideMerge(Layer.mergeAll(EventLog.layer, ExecutionDesk.layer(config.desk, config.deskDelaySeconds ?? 5)), withFaults)
  const withDelivery = Layer.provideMerge(
    WebhookDelivery.layer({
      extraSignatureHeaders: signatureHeaders,
      reserialisedSignature: config.plantDefects?.includes("webhook-reserialised") === true
    }),
    withEvents
  )
  // Usage counts are read by the audit hook (which writes them) and by /usage and invoices.
  const withUsage = Layer.provideMerge(Layer.mergeAll(UsageMeter.layer, Listings.layer, Symbols.layer), withDelivery)
  const services = Layer.provideMerge(
    Layer.mergeAll(
      PartnerService.layer,
      MarketService.layer,
      TradingService.layer,
      AccountsService.layer,
      AccountLifecycleService.layer,
      DeviceService.layer,
      WalletService.layer,
      SandboxService.layer,
      WebhookService.layer,
      SettingsService.layer,
      StreamService.layer({ retryMs: config.streamRetryMs }),
      KeyService.layer,
      PortalService.layer,
      PortalAccountService.layer,
      IdentityProvider.layer,
      Idempotency.layer,
      AuditTrail.layer,
      ReportService.layer,
      InvoiceService.layer,
      ReceiverScripts.layer
    ),
    withUsage
  )
  // The read-only reference families: one book of seeded data per run, read by four services.
  const withBook = Layer.provideMerge(ReferenceData.layer, services)
  const reference = Layer.provideMerge(
    Layer.mergeAll(
      ReferenceService.layer,
      CorporateService.layer,
      IntelService.layer,
      OfferService.layer,
      MarketViews.layer,
      PortfolioService.layer,
      OrderBlotter.layer,
      IncidentService.layer,
      PriceAlertService.layer,
      PricePins.layer,
      PriceHistoryService.layer,
      MarketCalendarService.layer,
      ConsoleView.layer
    ),
    withBook
  )
  // Subscriptions read the offers (a fund's NAV at allotment), so they come after the reference families.
  const withSubscriptions = Layer.provideMerge(Layer.mergeAll(SubscriptionService.layer, CorporateActions.layer, Rights.layer), reference)
  const withDialect = Layer.provideMerge(Dialect.layer({ name: dialect, signatureHeaders }), withSubscriptions)
  const engine = Layer.provideMerge(Gateway.layer({ adminToken: config.adminToken }, ROUTES), withDialect)
  // Provided under the whole engine and merged into its services, so the fibers the layers fork and every effect run
  // on the engine's runtime log through it; without one, nothing changes (Effect's default logger).
  return Layer.provideMerge(engine, config.logger === undefined ? Layer.empty : Logger.layer([config.logger]))
}

export type EngineServices = Layer.Success<ReturnType<typeof engineLayer>>

/** Turns a Web Request into the engine's exchange (header names lower-cased, body read as text). */
export const fromWebRequest = async (request: Request, remoteAddress = IN_PROCESS_ADDRESS): Promise<EngineRequest> => {
  const url = new URL(request.url)
  const headers: Record<string, string> = {}
  request.headers.forEach((value, name) => {
    headers[name] = value
  })
  const text = request.body === null ? undefined : await request.text()
  return {
    method: request.method.toUpperCase(),
    path: url.pathname.replace(/\/+$/, "") || "/",
    query: url.searchParams,
    search: url.search,
    headers,
    body: text === "" ? undefined : text,
    remoteAddress
  }
}

/** An in-process caller has no socket: it is the local machine, as a request over loopback would be (D-127). */
export const IN_PROCESS_ADDRESS = "127.0.0.1"

/** A streamed answer becomes a ReadableStream body; cancelling the reader interrupts the stream (E-131). */
export const toWebResponse = (response: EngineResponse): Response =>
  new Response(response.stream !== undefined ? Stream.toReadableStream(Stream.encodeText(response.stream)) : response.status === 204 ? null : response.body, {
    status: response.status,
    headers: response.headers
  })

/** The engine in-process: `fetch`-like access to the gateway, plus the runtime for direct service calls. */
export const makeInProcessEngine = (config: EngineConfig) => {
  const runtime = ManagedRuntime.make(engineLayer(config))
  /** `remoteAddress` stands for the caller's address (tests of the ipAllowlist); loopback by default. */
  const fetch = async (request: Request, remoteAddress?: string): Promise<Response> => {
    const exchange = await fromWebRequest(request, remoteAddress)
    // A caller that gives up (its signal aborts) interrupts the request, as a closed socket would.
    const response = await runtime.runPromise(
      Gateway.use((gateway) => gateway.handle(exchange)),
      { signal: request.signal }
    )
    // A timeout fault ends with no answer: fetch fails as it does when a server closes the connection (E-372).
    if (response.hangUp === true)
      throw new TypeError("fetch failed", { cause: new Error("the engine closed the connection without answering (a timeout fault)") })
    return toWebResponse(response)
  }
  return { runtime, fetch, dispose: () => runtime.dispose() }
}
