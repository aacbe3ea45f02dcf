/**
 * One HTTP exchange as the engine sees it, independent of the transport: the Node server (http/node-server.ts) and
 * the in-process `fetch` (runtime.ts) both turn their requests into an EngineRequest and write back an
 * EngineResponse. Plain data; building JSON answers and envelopes lives here so every surface answers alike.
 */
import type { Stream } from "effect"
import type { ApiFailure } from "../domain/errors.ts"

export interface EngineRequest {
  /** Upper-case method. */
  readonly method: string
  /** Path without query string. */
  readonly path: string
  readonly query: URLSearchParams
  /** The query string as sent, with its `?` (or ""): traces and idempotency fingerprints use it verbatim. */
  readonly search: string
  /** Header names in lower case. */
  readonly headers: Readonly<Record<string, string | undefined>>
  /** The raw body text; undefined when the request had none. */
  readonly body: string | undefined
  /**
   * The peer's address as the socket reports it (`serve`); the in-process `fetch` stands for a loopback caller
   * (127.0.0.1) unless a test names another. Never read from a header (E-211). The ipAllowlist (D-127) and the
   * per-source-IP limit (D-321) read it.
   */
  readonly remoteAddress?: string | undefined
}

export interface EngineResponse {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
  /** The value `body` serialises, kept for the trace so it is not parsed again. */
  readonly value?: unknown
  /**
   * A streamed answer (`GET /stream`): after the status and headers, the transport writes these chunks as they
   * come, until the stream ends or the client goes away, when it interrupts the stream (which frees what it holds).
   * `body` is then empty. Absent on every other answer, so the hot path only tests for it.
   */
  readonly stream?: Stream.Stream<string>
  /** A timeout fault's end (http/guards/faults.ts): the transport closes the connection without answering. */
  readonly hangUp?: true
}

export const JSON_TYPE = "application/json"

/**
 * Serialisations of values answered more than once (a service may return the very same object, e.g. the stock page
 * of one second): the text is kept as long as the object lives, so an identical answer is not serialised again.
 * Only large answers are remembered: a small one (a quote, an order) costs less to serialise again than its entry
 * costs the garbage collector, an ephemeron kept as long as the value, which a kept quote or order is (E-356).
 */
const serialised = new WeakMap<object, string>()
/** Bodies from this many characters up are worth remembering per value (the stock page is 33 KB; an order 0.3). */
export const REMEMBERED_BODY_CHARS = 4096
/** Likewise the UTF-8 bytes the Node server writes, per answered value. */
const encoded = new WeakMap<object, Buffer>()

/** The bytes of an answer's body: encoded once per answered value, so a repeated answer is not encoded again. */
export const bytesOf = (response: EngineResponse): Buffer => {
  const value = response.value
  if (typeof value !== "object" || value === null || response.body.length < REMEMBERED_BODY_CHARS) return Buffer.from(response.body, "utf8")
  let bytes = encoded.get(value)
  // The same value always serialises to the same body (serialise above), so its bytes can be shared.
  if (bytes === undefined) {
    bytes = Buffer.from(response.body, "utf8")
    encoded.set(value, bytes)
  }
  return bytes
}

const serialise = (value: unknown): string => {
  if (typeof value !== "object" || value === null) return JSON.stringify(value)
  let text = serialised.get(value)
  if (text === undefined) {
    text = JSON.stringify(value)
    if (text.length >= REMEMBERED_BODY_CHARS) serialised.set(value, text)
  }
  return text
}

export const jsonResponse = (status: number, value: unknown, headers: Readonly<Record<string, string>> = {}): EngineResponse => ({
  status,
  headers: { "content-type": JSON_TYPE, ...headers },
  body: serialise(value),
  value
})

/** The spec's error envelope `{ error: { code, message, ...extras } }` with the failure's status. */
export const errorResponse = (failure: ApiFailure, headers: Readonly<Record<string, string>> = {}): EngineResponse =>
  jsonResponse(failure.httpStatus, { error: { code: failure.code, message: failure.message, ...(failure.extras ?? {}) } }, headers)

export const withHeaders = (response: EngineResponse, headers: Readonly<Record<string, string>>): EngineResponse => ({
  ...response,
  headers: { ...response.headers, ...headers }
})
