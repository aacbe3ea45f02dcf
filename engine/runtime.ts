/**
 * Composition root: builds the whole engine (seams, services, gateway) from one configuration, and offers the two
 * ways in: a Node HTTP server, and an in-process handler (Web Request -> Response) for scenarios and tests.
 * Owns wiring only. The seed and the clock's start are the run's identity: same config = same behaviour.
 */
import { createServer } from "node:http"
import { NodeHttpServer } from "@effect/platform-node"
import { Effect, Layer, ManagedRuntime } from "effect"
import { HttpServer, HttpServerRequest, HttpServerResponse } from "effect/http"
import { MarketService } from "./app/market.ts"
import { PartnerService } from "./app/partners.ts"
import { TradingService } from "./app/trading.ts"
import { EventLog } from "./events/event-log.ts"
import { Gateway } from "./http/gateway.ts"
import { Idempotency } from "./http/guards/idempotency.ts"
import { Maintenance } from "./http/guards/maintenance.ts"
import { RateLimiter } from "./http/guards/rate-limit.ts"
import { type ClockMode, EngineClock } from "./sim/clock.ts"
import { type DeskMode, ExecutionDesk } from "./sim/desk.ts"
import { MarketFeed } from "./sim/market-feed.ts"
import { Entropy } from "./sim/random.ts"
import { Scheduler } from "./sim/scheduler.ts"
import { Trace } from "./sim/trace.ts"
import { MemoryStoreLayer } from "./store/memory.ts"
import { Store } from "./store/port.ts"
import { PostgresStoreLayer } from "./store/postgres.ts"

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
}

export const storeLayer = (config: EngineConfig): Layer.Layer<Store, unknown> => {
  if (config.store === "memory") return MemoryStoreLayer
  if (config.databaseUrl === undefined) return Layer.effect(Store, Effect.fail(new Error("--store postgres needs --database-url (or DATABASE_URL)")))
  return PostgresStoreLayer(config.databaseUrl)
}

/** Every service of the engine, gateway included. */
export const engineLayer = (config: EngineConfig) => {
  const seams = Layer.mergeAll(
    storeLayer(config),
    EngineClock.layer(config.clock, config.start),
    Entropy.layer(config.seed),
    Trace.layer,
    config.rateLimit === "off" ? RateLimiter.layerOff : RateLimiter.layer,
    Maintenance.layer
  )
  const withFeed = Layer.provideMerge(MarketFeed.layer(config.seed), seams)
  const withScheduler = Layer.provideMerge(Scheduler.layer, withFeed)
  const withEvents = Layer.provideMerge(Layer.mergeAll(EventLog.layer, ExecutionDesk.layer(config.desk, config.deskDelaySeconds ?? 5)), withScheduler)
  const services = Layer.provideMerge(Layer.mergeAll(PartnerService.layer, MarketService.layer, TradingService.layer, Idempotency.layer), withEvents)
  const gateway = Gateway.layer({ adminToken: config.adminToken }).pipe(Layer.provide(HttpServer.layerServices))
  return Layer.provideMerge(gateway, services)
}

/** The engine in-process: `fetch`-like access to the gateway, plus the runtime for direct service calls. */
export const makeInProcessEngine = (config: EngineConfig) => {
  const runtime = ManagedRuntime.make(engineLayer(config))
  const fetch = (request: Request): Promise<Response> =>
    runtime.runPromise(
      Effect.gen(function* () {
        const gateway = yield* Gateway
        const response = yield* gateway.handle(HttpServerRequest.fromWeb(request))
        return HttpServerResponse.toWeb(response)
      })
    )
  return { runtime, fetch, dispose: () => runtime.dispose() }
}

/** A Node HTTP server on `port` serving the gateway; background scheduling runs unless the clock is manual. */
export const serverLayer = (config: EngineConfig, port: number, host = "127.0.0.1") => {
  const app = Effect.gen(function* () {
    const gateway = yield* Gateway
    return yield* gateway.handle(yield* HttpServerRequest.HttpServerRequest)
  })
  const serve = HttpServer.serve()(app)
  const background = Layer.effectDiscard(
    Effect.gen(function* () {
      if (config.clock === "manual") return
      const scheduler = yield* Scheduler
      yield* Effect.forkScoped(scheduler.loop(250))
    })
  )
  return Layer.mergeAll(serve, background).pipe(Layer.provide(engineLayer(config)), Layer.provide(NodeHttpServer.layer(createServer, { port, host })))
}
