/**
 * Outbound: the one place the engine makes network calls (webhook deliveries). It POSTs bytes to a URL with a
 * timeout and reports what happened: an answer (status, latency), a timeout, or an unreachable endpoint.
 * Owns transport only: no signing, no retries, no records (events/webhook-delivery.ts owns those).
 *
 * Two implementations:
 * - `Outbound.network`: real `fetch`, redirects not followed (`redirect: "manual"`: a 3xx is a non-2xx answer),
 *   aborted after the timeout. Used by `serve`; it reads real time, which is why this file is on the determinism
 *   guard's allowlist (test/support/determinism.ts).
 * - `Outbound.simulated(receivers)`: an in-memory set of receivers whose answers a test or scenario scripts
 *   (status, latency, unreachable). No real time passes: a scripted latency above the timeout is reported as a
 *   timeout at once, so the 8 s rule and the retry schedule run on the engine's (virtual) clock.
 */
import { Context, Effect, Layer } from "effect"
import { EngineClock } from "./clock.ts"

export interface OutboundRequest {
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
  readonly timeoutMs: number
}

export type OutboundResult =
  | { readonly kind: "answered"; readonly status: number; readonly latencyMs: number }
  | { readonly kind: "timeout" }
  | { readonly kind: "unreachable"; readonly reason: string }

export class Outbound extends Context.Service<
  Outbound,
  {
    /** `simulated` answers at once (callers may run it inline); `network` may take up to the timeout. */
    readonly mode: "network" | "simulated"
    readonly post: (request: OutboundRequest) => Effect.Effect<OutboundResult>
  }
>()("sokoni/Outbound") {
  static readonly network = Layer.succeed(
    Outbound,
    Outbound.of({
      mode: "network",
      post: (request) =>
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
}

/**
 * Simulated receivers by URL. A URL answers its scripted answers in order, then its `otherwise` answer; a URL
 * nobody scripted is unreachable (as a closed port would be). Every request is kept, answered or not.
 */
export class SimReceivers {
  readonly received: Array<ReceivedRequest> = []
  private readonly scripts = new Map<string, { queue: Array<ScriptedAnswer>; otherwise: ScriptedAnswer }>()

  /** Scripts `url`: `answers` first, in order, then `otherwise` (default 200) for every later request. */
  script(url: string, answers: ReadonlyArray<ScriptedAnswer> = [], otherwise: ScriptedAnswer = { status: 200 }): void {
    this.scripts.set(url, { queue: [...answers], otherwise })
  }

  /** Requests received since the last call (and forgets them). */
  take(): Array<ReceivedRequest> {
    return this.received.splice(0)
  }

  answer(request: OutboundRequest, now: number): OutboundResult {
    const script = this.scripts.get(request.url)
    const scripted = script === undefined ? { unreachable: true } : (script.queue.shift() ?? script.otherwise)
    const latencyMs = scripted.latencyMs ?? 0
    const result: OutboundResult =
      scripted.unreachable === true
        ? { kind: "unreachable", reason: "connection refused" }
        : latencyMs >= request.timeoutMs
          ? { kind: "timeout" }
          : { kind: "answered", status: scripted.status ?? 200, latencyMs }
    this.received.push({ url: request.url, headers: request.headers, body: request.body, at: now, result })
    return result
  }
}
