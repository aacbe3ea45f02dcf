/**
 * EngineHost: holds the running engine (its layers built into one runtime, the gateway, the scheduler's background
 * loop) for a transport (http/node-server.ts), and replaces it whole when `POST /_sim/reset` asks (E-242).
 * Owns the world's lifecycle: build, the reset hand-over, stop. Does not own the request's meaning (the gateway) nor
 * the sockets (the transport, which ends its open streams in `beforeReset`).
 *
 * The hand-over, step by step (a reset never mixes two worlds):
 * 1. The reset route accepts a plan (`EngineReset.schedule`): from then on new requests wait (the gate).
 * 2. The requests under way, the reset's own included, finish on the old world; their answers are held.
 * 3. The old world stops: background loop interrupted, open streams ended, every layer released (the pool closed).
 * 4. On postgres the tables are emptied; the new world is built from the engine's config with the plan's start and
 *    seed (same admin token, store, clock mode, desk mode, limits).
 * 5. The held answers go out (the reset's says the new world's clock), then the waiting requests run on the new world.
 * If the new world cannot be built, the reset answers 503 and every later request tries again to build it.
 */
import { Context, Effect, Fiber, type Layer, ManagedRuntime } from "effect"
import { fail } from "../domain/errors.ts"
import { type EngineConfig, engineLayer } from "../runtime.ts"
import { withoutRetryAfterOn429 } from "../sim/defects.ts"
import type { EngineReset, ResetPlan } from "../sim/reset.ts"
import { Scheduler } from "../sim/scheduler.ts"
import { wipePostgresStore } from "../store/postgres.ts"
import { type EngineRequest, type EngineResponse, errorResponse } from "./exchange.ts"
import { Gateway } from "./gateway.ts"

export interface EngineHost {
  /** Runs `request` on the current world and hands its answer to `respond` (later, while a reset is under way). */
  readonly handle: (request: EngineRequest, respond: (response: EngineResponse) => void) => void
  /** Stops the background loop and releases every layer (after a reset under way has finished). */
  readonly stop: () => Promise<void>
}

interface World {
  readonly runtime: ManagedRuntime.ManagedRuntime<Gateway | Scheduler, unknown>
  readonly gateway: Gateway["Service"]
  readonly background: Fiber.Fiber<unknown, unknown> | undefined
}

export interface HostHooks {
  /** Called once the old world has answered everything under way, before it is released: end open streams here. */
  readonly beforeReset?: (() => Promise<void>) | undefined
}

const internalError = errorResponse(fail("INTERNAL_ERROR", "unexpected failure; safe to retry"))
const RESET_PATH = "/_sim/reset"
const stopping = errorResponse(fail("SERVICE_UNAVAILABLE", "the engine is stopping; nothing was processed"), { "retry-after": "1" })
const startedOver = errorResponse(fail("SERVICE_UNAVAILABLE", "the engine started over while this stream was opening; reconnect"), { "retry-after": "1" })

/** Builds the engine of `config` (store connected and migrated) and returns its host; rejects when it cannot start. */
export const makeEngineHost = async (config: EngineConfig, hooks: HostHooks = {}): Promise<EngineHost> => {
  let pending: ResetPlan | undefined
  let gate: { readonly opened: Promise<void>; readonly open: () => void } | undefined
  let inFlight = 0
  let held: Array<{ readonly request: EngineRequest; readonly response: EngineResponse; readonly respond: (response: EngineResponse) => void }> = []
  let resetting: Promise<void> | undefined
  /** The plan a failed rebuild is retried with. */
  let lastPlan: ResetPlan | undefined
  /** Set by stop(): no world is built or served after it. */
  let stopped = false

  const reset: EngineReset["Service"] = {
    schedule: ({ at, seed, now }) =>
      Effect.suspend(() => {
        if (pending !== undefined) return Effect.fail(fail("CONFLICT", "a reset is already under way"))
        const plan = { at: at ?? (config.clock === "system" ? now : (config.start ?? now)), seed: seed ?? config.seed }
        pending = plan
        let open = () => {}
        const opened = new Promise<void>((resolve) => {
          open = resolve
        })
        gate = { opened, open }
        return Effect.succeed(plan)
      })
  }

  const build = async (plan: ResetPlan | undefined): Promise<World> => {
    const runtime = ManagedRuntime.make(
      engineLayer({ ...config, ...(plan === undefined ? {} : { start: plan.at, seed: plan.seed }), reset }) as Layer.Layer<Gateway | Scheduler, unknown>
    )
    try {
      const context = await runtime.context()
      const background = config.clock === "manual" ? undefined : Effect.runForkWith(context)(Scheduler.use((s) => s.loop(250)))
      return { runtime, gateway: Context.get(context, Gateway), background }
    } catch (error) {
      await runtime.dispose()
      throw error
    }
  }

  const release = async (world: World) => {
    if (world.background !== undefined) await Effect.runPromise(Fiber.interrupt(world.background))
    await world.runtime.dispose()
  }

  let world: World | undefined = await build(undefined)
  let broken: string | undefined

  /** Steps 3 to 5 of the hand-over. */
  const handOver = async (plan: ResetPlan) => {
    const old = world
    world = undefined
    try {
      // Ending the old world's streams must not keep it alive: a failure there is the old world's last word.
      await hooks.beforeReset?.().catch(() => undefined)
      if (old !== undefined) await release(old)
      if (config.store === "postgres" && config.databaseUrl !== undefined) await Effect.runPromise(wipePostgresStore(config.databaseUrl))
      world = await build(plan)
      broken = undefined
    } catch (error) {
      broken = String((error as Error)?.message ?? error).split("\n")[0]
      lastPlan = plan
    }
    const answers = held
    held = []
    pending = undefined
    const waiting = gate
    gate = undefined
    for (const { request, response, respond } of answers) {
      const isReset = request.method === "POST" && request.path === RESET_PATH && response.status === 200
      // A stream opened on the old world would read a world that is gone: the client reconnects to the new one.
      if (response.stream !== undefined) respond(startedOver)
      else respond(isReset && broken !== undefined ? unavailable() : response)
    }
    waiting?.open()
  }

  const unavailable = () =>
    errorResponse(fail("SERVICE_UNAVAILABLE", `the engine could not start over: ${broken ?? "unknown failure"}; retry POST /_sim/reset`), {
      "retry-after": "1"
    })

  /** After a failed rebuild: try again, once at a time, for the next request. */
  const recover = async () => {
    resetting ??= (async () => {
      try {
        const built = await build(lastPlan)
        // A host stopped while this world was being built never serves it: released here, as stop() waits for it.
        if (stopped) await release(built)
        else {
          world = built
          broken = undefined
        }
      } catch (error) {
        broken = String((error as Error)?.message ?? error).split("\n")[0]
      }
    })()
    await resetting
    resetting = undefined
  }

  const noRetryAfter = config.plantDefects?.includes("no-retry-after") === true
  const handle = (request: EngineRequest, respond: (response: EngineResponse) => void): void => {
    if (stopped) {
      respond(stopping)
      return
    }
    if (gate !== undefined) {
      void gate.opened.then(() => handle(request, respond))
      return
    }
    const current = world
    if (current === undefined) {
      void recover().then(() => (world === undefined ? respond(stopped ? stopping : unavailable()) : handle(request, respond)))
      return
    }
    inFlight += 1
    // Requests run in fibers started with an empty context: the gateway provides the engine's own, and providing it
    // onto an empty context is free where merging it into a full one copies every service on each request.
    Effect.runFork(current.gateway.handle(request)).addObserver((exit) => {
      inFlight -= 1
      const built = exit._tag === "Success" ? exit.value : internalError
      // TEST ONLY (sim/defects.ts, E-190): false unless `serve --plant-defect no-retry-after`.
      const response = noRetryAfter ? withoutRetryAfterOn429(built) : built
      if (pending === undefined) return respond(response)
      held.push({ request, response, respond })
      if (inFlight === 0) void handOver(pending)
    })
  }

  const stop = async () => {
    stopped = true
    if (gate !== undefined) await gate.opened
    // A rebuild after a failed reset may be under way: it releases its world once it sees `stopped`.
    if (resetting !== undefined) await resetting
    const current = world
    world = undefined
    if (current !== undefined) await release(current)
  }

  return { handle, stop }
}
