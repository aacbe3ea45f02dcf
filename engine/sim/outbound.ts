/**
 * Outbound: the one place the engine makes network calls (webhook deliveries). It POSTs bytes to a URL with a
 * timeout and reports what happened: an answer (status, latency), a timeout, or an unreachable endpoint.
 * Owns transport only: no signing, no retries, no records (events/webhook-delivery.ts owns those).
 *
 * Three implementations:
 * - `Outbound.network`: real `fetch`, redirects not followed (`redirect: "manual"`: a 3xx is a non-2xx answer),
 *   aborted after the timeout. It reads real time, which is why this file is on the determinism guard's allowlist
 *   (test/support/determinism.ts).
 * - `Outbound.simulated(receivers)`: an in-memory set of receivers whose answers a test or scenario scripts
 *   (status, latency, unreachable). No real time passes: a scripted latency above the timeout is reported as a
 *   timeout at once, so the 8 s rule and the retry schedule run on the engine's (virtual) clock.
 * - `Outbound.routed`: the engine's default (`serve`): a URL scripted through the control API (`PUT /_sim/receivers`,
 *   the `Receivers` in context) answers as `simulated` does, every other URL goes to the network (E-240).
 */
import { Context, Effect, Layer } from "effect"
import { EngineClock } from "./clock.ts"

export interface OutboundRequest {
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
  readonly timeoutMs: number
  /** The partner whose webhook this is (never sent): simulated receivers may be scripted for one partner only. */
  readonly partnerId?: string | undefined
}

export type OutboundResult =
  | { readonly kind: "answered"; readonly status: number; readonly latencyMs: number }
  | { readonly kind: "timeout" }
  | { readonly kind: "unreachable"; readonly reason: string }

/** Real `fetch`: redirects not followed, aborted after the timeout, the body left unread. */
const networkPost = (request: OutboundRequest): Effect.Effect<OutboundResult> =>
  Effect.promise(async (): Promise<OutboundResult> => {
    const started = performance.now()
    try {
      const response = await fetch(request.url, {
        method: "POST",
        headers: request.headers,
        body: request.body,
        redirect: "manual",
        signal: AbortSignal.timeout(request.timeoutMs)
      })
      // The body is not read: only the status counts, and an unread body must not keep the socket busy.
      await response.body?.cancel()
      return { kind: "answered", status: response.status, latencyMs: Math.round(performance.now() - started) }
    } catch (error) {
      const name = (error as { name?: string })?.name
      if (name === "TimeoutError" || name === "AbortError") return { kind: "timeout" }
      return { kind: "unreachable", reason: String((error as Error)?.message ?? error) }
    }
  })

export class Outbound extends Context.Service<
  Outbound,
  {
    /**
     * `simulated` answers at once (callers may run it inline); `network` may take up to the timeout; `routed` answers
     * at once exactly where `simulates` says so.
     */
    readonly mode: "network" | "simulated" | "routed"
    readonly post: (request: OutboundRequest) => Effect.Effect<OutboundResult>
    /** `routed` only: whether a request to `url` for `partnerId` is answered by a simulated receiver (at once). */
    readonly simulates?: ((url: string, partnerId: string | undefined) => boolean) | undefined
  }
>()("sokoni/Outbound") {
  static readonly network = Layer.succeed(Outbound, Outbound.of({ mode: "network", post: (request) => networkPost(request) }))

  /** Scripted receivers (the `Receivers` in context) answer the URLs they know, the network every other one. */
  static readonly routed = Layer.effect(
    Outbound,
    Effect.gen(function* () {
      const clock = yield* EngineClock
      const receivers = (yield* Receivers).receivers
      return Outbound.of({
        mode: "routed",
        simulates: (url, partnerId) => receivers.scripts(url, partnerId),
        post: (request) =>
          receivers.scripts(request.url, request.partnerId) ? Effect.map(clock.now, (now) => receivers.answer(request, now)) : networkPost(request)
      })
    })
  )

  static readonly simulated = (receivers: SimReceivers) =>
    Layer.effect(
      Outbound,
      Effect.gen(function* () {
        const clock = yield* EngineClock
        return Outbound.of({
          mode: "simulated",
          post: (request) => Effect.map(clock.now, (now) => receivers.answer(request, now))
        })
      })
    )
}

/** One scripted answer: a status after a latency (default 200 after 0 ms), or no connection at all. */
export interface ScriptedAnswer {
  readonly status?: number | undefined
  readonly latencyMs?: number | undefined
  readonly unreachable?: boolean | undefined
}

export interface ReceivedRequest {
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
  /** Engine time (epoch ms) the request was sent at. */
  readonly at: number
  readonly result: OutboundResult
  /** The partner whose webhook sent it, when the sender said. */
  readonly partnerId?: string | undefined
  /** The secret the receiver checked the signature with (its script's, when it had one). Never shown. */
  readonly secret?: string | undefined
}

/** At most this many received requests are kept until taken (a long-running `serve` stays bounded): oldest go first. */
export const MAX_KEPT_RECEIVED = 10_000

/**
 * Simulated receivers by URL. A URL answers its scripted answers in order, then its `otherwise` answer; a URL
 * nobody scripted is unreachable (as a closed port would be). Every request is kept, answered or not.
 *
 * A script may be for one partner's webhooks only (`partnerId`): on an engine several partners share (`sokoni
 * conform`), a scenario's receiver is then not consumed by another partner's late retries to the same URL (E-241).
 * A partner's own script comes before one for every partner.
 */
export class SimReceivers {
  readonly received: Array<ReceivedRequest> = []
  private readonly scripted = new Map<string, { queue: Array<ScriptedAnswer>; otherwise: ScriptedAnswer; secret: string | undefined }>()

  /** Scripts `url`: `answers` first, in order, then `otherwise` (default 200) for every later request. */
  script(
    url: string,
    answers: ReadonlyArray<ScriptedAnswer> = [],
    otherwise: ScriptedAnswer = { status: 200 },
    scope: { readonly partnerId?: string | undefined; readonly secret?: string | undefined } = {}
  ): void {
    this.scripted.set(scriptKey(url, scope.partnerId), { queue: [...answers], otherwise, secret: scope.secret })
  }

  /** Whether a request to `url` for `partnerId` meets a script (its own or one for every partner). */
  scripts(url: string, partnerId: string | undefined): boolean {
    return this.scriptFor(url, partnerId) !== undefined
  }

  /** The secret the receiver of `url` for `partnerId` checks signatures with, when it was given one. */
  secretFor(url: string, partnerId: string | undefined): string | undefined {
    return this.scriptFor(url, partnerId)?.secret
  }

  /** Requests received since the last call (and forgets them); with `partnerId`, only that partner's (others stay). */
  take(partnerId?: string): Array<ReceivedRequest> {
    if (partnerId === undefined) return this.received.splice(0)
    const mine = this.received.filter((r) => r.partnerId === partnerId)
    const others = this.received.filter((r) => r.partnerId !== partnerId)
    this.received.splice(0, this.received.length, ...others)
    return mine
  }

  answer(request: OutboundRequest, now: number): OutboundResult {
    const script = this.scriptFor(request.url, request.partnerId)
    const scripted = script === undefined ? { unreachable: true } : (script.queue.shift() ?? script.otherwise)
    const latencyMs = scripted.latencyMs ?? 0
    const result: OutboundResult =
      scripted.unreachable === true
        ? { kind: "unreachable", reason: "connection refused" }
        : latencyMs >= request.timeoutMs
          ? { kind: "timeout" }
          : { kind: "answered", status: scripted.status ?? 200, latencyMs }
    this.received.push({
      url: request.url,
      headers: request.headers,
      body: request.body,
      at: now,
      result,
      partnerId: request.partnerId,
      secret: script?.secret
    })
    if (this.received.length > MAX_KEPT_RECEIVED) this.received.splice(0, this.received.length - MAX_KEPT_RECEIVED)
    return result
  }

  private scriptFor(url: string, partnerId: string | undefined) {
    return (partnerId === undefined ? undefined : this.scripted.get(scriptKey(url, partnerId))) ?? this.scripted.get(scriptKey(url, undefined))
  }
}

const scriptKey = (url: string, partnerId: string | undefined) => `${partnerId ?? "*"} ${url}`

/**
 * The simulated receivers of one engine: what `PUT /_sim/receivers` scripts and `POST /_sim/receivers/take` reads,
 * and what `Outbound.routed` answers from. A fresh set per engine (and per reset), unless the config shares one.
 */
export class Receivers extends Context.Service<Receivers, { readonly receivers: SimReceivers }>()("sokoni/Receivers") {
  static readonly layer = (receivers?: SimReceivers) => Layer.sync(Receivers, () => Receivers.of({ receivers: receivers ?? new SimReceivers() }))
}
