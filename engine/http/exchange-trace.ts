/**
 * What the simulation's trace and the console's feed keep of an answered exchange (E-382, E-030): the trace line
 * (the bodies as JSON values, credentials redacted) and the console's one-line notice, unless the request only
 * observes. The gateway (gateway.ts) calls `traced` after every answer; this module owns what the line holds.
 */
import { Effect } from "effect"
import type { ConsoleFeed } from "../events/console-feed.ts"
import { lastFieldJson, type Trace } from "../sim/trace.ts"
import { isFailure, parseJsonBody } from "./body.ts"
import { type EngineRequest, type EngineResponse, REMEMBERED_BODY_CHARS } from "./exchange.ts"
import { mayHoldSecret, redactSecrets } from "./redact.ts"

/** The console's own surface (E-382): watching the simulation neither enters its trace nor its console feed. */
export const CONSOLE_ROOT = "/_sim/console"

/** The header the console sends on every call: its reads (GET) only watch, and say so. */
export const CONSOLE_HEADER = "x-sokoni-console"

/**
 * Requests that only observe: neither recorded in the trace nor heard on the console's feed (E-382). The trace's
 * own reads, the console's surface, and every GET the console makes (findings, faults): watching the simulation must
 * not change its trace, nor wake the console that watches.
 */
const CONSOLE_ROOT_SLASH = `${CONSOLE_ROOT}/`
export const observes = (request: EngineRequest) =>
  request.path.startsWith("/_sim/trace") ||
  request.path === CONSOLE_ROOT ||
  request.path.startsWith(CONSOLE_ROOT_SLASH) ||
  (request.method === "GET" && request.headers[CONSOLE_HEADER] !== undefined)

/** Made once per gateway: the credential verdicts it remembers live as long as the gateway. */
export const makeExchangeTrace = (trace: Trace["Service"], consoleFeed: ConsoleFeed["Service"]) => {
  /**
   * Answer values already scanned for credentials: a value answered again (the stock page of one second, 33 KB)
   * is not scanned again. The same value always serialises to the same text (exchange.ts), so the verdict holds.
   */
  const scanned = new WeakMap<object, boolean>()
  const holdsSecret = (text: string, value: unknown) => {
    if (typeof value !== "object" || value === null || text.length < REMEMBERED_BODY_CHARS) return mayHoldSecret(text)
    let secret = scanned.get(value)
    if (secret === undefined) {
      secret = mayHoldSecret(text)
      scanned.set(value, secret)
    }
    return secret
  }

  /** What the trace keeps of a body: the JSON value, or the raw text when it is not (bounded) JSON. */
  const traceValue = (text: string | undefined, value: unknown) => {
    // Only a body that holds a credential is walked again (E-030): most hold none.
    const secret = text !== undefined && holdsSecret(text, value)
    if (value !== undefined) return secret ? redactSecrets(value) : value
    const parsed = parseJsonBody(text)
    const kept = isFailure(parsed) ? text : (parsed ?? null)
    return secret ? redactSecrets(kept) : kept
  }

  /** The exchange's trace line; an answer kept as it is sent carries its body text, not serialised again. */
  const httpLine = (sent: EngineRequest, response: EngineResponse): Record<string, unknown> => {
    const kept = traceValue(response.body, response.value)
    const line: Record<string, unknown> = {
      kind: "http",
      method: sent.method,
      path: sent.path + sent.search,
      request: traceValue(sent.body, undefined),
      status: response.status,
      response: kept
    }
    // `body` is exactly JSON.stringify(value) for an answer made by jsonResponse (exchange.ts), and only then.
    // Set on the line itself, not on a copy of it: a symbol key is not one of its fields (trace.ts).
    if (kept === response.value && typeof kept === "object" && kept !== null && typeof response.body === "string")
      (line as { [lastFieldJson]?: string })[lastFieldJson] = response.body
    return line
  }

  // Made once: this runs on every request, and a closure made per request is garbage per request.
  const traceFailed = (cause: unknown) => Effect.logError("could not record the exchange in the trace", cause)

  /** The exchange in the trace and on the console's feed (`sent` as it arrived, `request` as the dialect read it). */
  const traced = (sent: EngineRequest, request: EngineRequest, response: EngineResponse): Effect.Effect<void> => {
    const recorded = Effect.catchCause(trace.record(httpLine(sent, response)), traceFailed)
    const heard = consoleFeed.publish(() => ({ kind: "exchange", method: request.method, path: request.path, status: response.status }))
    // No console listening (nearly always): publishing is `Effect.void`, not a step worth chaining.
    return heard === Effect.void ? recorded : Effect.andThen(recorded, heard)
  }
  return { traced }
}
