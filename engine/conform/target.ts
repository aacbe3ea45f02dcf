/**
 * The target of `sokoni conform` over the wire: calls a base URL with `fetch`, keeps every exchange for the report's
 * timeline, writes the one-line `curl` that reproduces an exchange, and uses the control API (`/_sim`, with an admin
 * token) when the target has one. Owns the transport and the target's clock as conform sees it.
 * Does not own the checks (contract-checks.ts, stateful-checks.ts) nor the run (conform.ts).
 *
 * Time: no clock is read here. The CLI passes `now` (wall time) and `sleep`; with a control API the instants come from
 * the target's own clock (`GET /_sim/clock`), which is virtual on our engine, so waits are clock advances.
 */
import { curlCommand, parseSseMessage, timelineOf } from "./exchange-text.ts"
import { type HistoryEntry, movesClock } from "./history-entries.ts"
import { isoAt } from "../sim/clock.ts"

export interface Exchange {
  readonly method: string
  readonly path: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string | undefined
  readonly status: number
  readonly responseHeaders: Headers
  /** The parsed JSON answer, the text when it is not JSON, null when empty. */
  readonly json: unknown
  readonly text: string
  /** Instant on the target's clock as conform knows it (virtual with a control API). */
  readonly at: number
}

export interface TargetOptions {
  /** The target's origin, e.g. http://127.0.0.1:4010 (the partner bases are appended). */
  readonly base: string
  readonly adminToken?: string | undefined
  /** Wall time (epoch ms): the CLI's clock, used when the target has no control API. */
  readonly now: () => number
  /** Waits real time (only when the target has no virtual clock to advance). */
  readonly sleep: (ms: number) => Promise<void>
  readonly fetch?: typeof fetch | undefined
  /**
   * Resolves after `ms` of real time: the failure bound of reads that wait for something to arrive (an event stream).
   * Default `sleep`. It only ends a read that would otherwise hang on a target that never sends.
   */
  readonly bound?: ((ms: number) => Promise<void>) | undefined
  /** Told before every real wait: what it waits for and how long at most (the CLI prints it). */
  readonly onWait?: ((what: string, ms: number) => void) | undefined
  /**
   * Where the target serves the contract's operations when not under the contract's `servers` bases: every path under
   * this prefix, the base taken off (`--prefix /mock`; "" is the root, as Prism serves it). Default: found by itself.
   */
  readonly prefix?: string | undefined
  /** Told of every partner-API exchange, stream message and webhook delivery: the run's history (history.ts). */
  readonly record?: ((entry: HistoryEntry) => void) | undefined
}

/** Who called, without the key: its environment and last four characters (a history is shared; a key is a secret). */
const callerOf = (path: string, headers: Readonly<Record<string, string>>): string => {
  const key = Object.entries(headers).find(([name]) => name.toLowerCase() === "x-api-key")?.[1]
  return `${path.includes("/sandbox/") ? "sandbox" : "production"}:${key === undefined ? "no key" : `…${key.slice(-4)}`}`
}

/** How far the target's clock is from conform's, and what it was read from. */
export interface ClockSkew {
  readonly ms: number
  /** Half the round trip of the reading, plus a second when the reading is the `Date` header (whole seconds). */
  readonly uncertaintyMs: number
  readonly source: string
}

/** One Server-Sent Events message. */
export interface SseMessage {
  readonly id?: string
  readonly event?: string
  readonly data?: unknown
}

export const SANDBOX_BASE = "/api/sandbox/v1/partner"
export const PRODUCTION_BASE = "/api/v1/partner"
export const SANDBOX_ROOT = "/api/sandbox/v1"
/** Where the public operations (GET /status) live. */
export const PUBLIC_ROOT = "/api/v1"

export const makeTarget = (options: TargetOptions) => {
  const doFetch = options.fetch ?? globalThis.fetch
  const origin = options.base.replace(/\/+$/, "")
  const hasControl = options.adminToken !== undefined && options.adminToken !== ""
  /**
   * Where the target serves the contract: under the spec's bases (our engine, the real service), or every path at the
   * root for both environments (a mock generated from the contract, such as Prism). Found by `detectLayout`.
   */
  let layout: "bases" | "flat" | "prefix" = options.prefix === undefined ? "bases" : "prefix"
  const rootPrefix = () => (layout === "prefix" ? (options.prefix ?? "").replace(/\/+$/, "") : "")
  /** The URL actually called for a canonical path (exchanges keep the canonical one, which the validator matches). */
  const actualPath = (path: string) => {
    if (layout === "bases" || path.startsWith("/_sim")) return path
    for (const base of [SANDBOX_BASE, PRODUCTION_BASE, SANDBOX_ROOT, PUBLIC_ROOT])
      if (path.startsWith(`${base}/`)) return `${rootPrefix()}${path.slice(base.length)}`
    return `${rootPrefix()}${path}`
  }
  /** The target's virtual clock as last read through the control API. */
  let virtualNow: { at: number; mode: string; wallAt: number } | undefined
  /** Without a control API: the target's clock ahead of conform's (negative behind), read from its answers. */
  let skew: ClockSkew | undefined

  const call = async (
    method: string,
    path: string,
    init: { readonly headers?: Record<string, string>; readonly body?: unknown; readonly rawBody?: string } = {}
  ): Promise<Exchange> => {
    const body = init.rawBody ?? (init.body === undefined ? undefined : JSON.stringify(init.body))
    const headers: Record<string, string> = { ...(body === undefined ? {} : { "content-type": "application/json" }), ...init.headers }
    const at = await nowOnTarget()
    const sentSeq = nextTick()
    const response = await doFetch(`${origin}${actualPath(path)}`, { method, headers, ...(body === undefined ? {} : { body }) })
    const answeredSeq = nextTick()
    const streaming = response.headers.get("content-type")?.startsWith("text/event-stream") === true
    if (streaming) await response.body?.cancel()
    const text = streaming ? "" : await response.text()
    let json: unknown = text === "" ? null : text
    if (text !== "" && response.headers.get("content-type")?.includes("json") === true) {
      try {
        json = JSON.parse(text)
      } catch {
        // a broken JSON body stays text: the schema check reports it
      }
    }
    const exchange = { method, path, headers, body, status: response.status, responseHeaders: response.headers, json, text, at }
    await recordExchange(exchange, sentSeq, answeredSeq)
    return exchange
  }

  /** The history's logical clock: one tick per send and per answer, so requests in flight together stay unordered. */
  let tick = 0
  const nextTick = () => ++tick

  /** Keeps a partner-API exchange in the run's history (the control API's are not the partner's history). */
  const recordExchange = async (x: Exchange, sentSeq: number, answeredSeq: number) => {
    if (options.record !== undefined && movesClock(x.method, x.path))
      options.record({ kind: "clock", at: isoAt(await nowOnTarget()), what: `${x.method} ${x.path}` })
    if (options.record === undefined || x.path.startsWith("/_sim")) return
    options.record({
      kind: "exchange",
      sentAt: isoAt(x.at),
      answeredAt: isoAt(await nowOnTarget()),
      sentSeq,
      answeredSeq,
      caller: callerOf(x.path, x.headers),
      method: x.method,
      path: x.path,
      idempotencyKey: Object.entries(x.headers).find(([name]) => name.toLowerCase() === "idempotency-key")?.[1],
      requestBody: x.body,
      status: x.status,
      rate: rateOf(x.responseHeaders),
      body: x.text
    })
  }

  /**
   * A fetch for clients that bring their own (the scenario runner) whose partner-API exchanges join the run's history;
   * a stream's answer is kept without its body (its messages are the scenario's to read).
   */
  const recordingFetch =
    (inner: typeof fetch): typeof fetch =>
    async (input, init) => {
      const at = await nowOnTarget()
      const sentSeq = nextTick()
      const response = await inner(input, init)
      const answeredSeq = nextTick()
      if (options.record === undefined) return response
      const url = new URL(String(input instanceof Request ? input.url : input))
      if (url.pathname === "/_sim/reset" && response.status === 200) options.record({ kind: "reset", at: isoAt(await nowOnTarget()) })
      if (movesClock(init?.method ?? "GET", url.pathname))
        options.record({ kind: "clock", at: isoAt(await nowOnTarget()), what: `${init?.method} ${url.pathname}` })
      const streaming = response.headers.get("content-type")?.startsWith("text/event-stream") === true
      const text = streaming ? "" : await response.clone().text()
      const headers = Object.fromEntries(new Headers(init?.headers).entries())
      const body = typeof init?.body === "string" ? init.body : undefined
      const path = url.pathname
      const exchange = { method: init?.method ?? "GET", path, headers, body, status: response.status, responseHeaders: response.headers, json: null, text, at }
      await recordExchange(exchange, sentSeq, answeredSeq)
      return response
    }

  /** Records a webhook delivery received (its exact bytes) in the run's history. */
  const recordDelivery = (raw: string) => {
    if (options.record === undefined) return
    let eventId = ""
    try {
      eventId = String((JSON.parse(raw) as { eventId?: unknown }).eventId ?? "")
    } catch {
      // not JSON: kept under an empty eventId
    }
    void nowOnTarget().then((at) => options.record?.({ kind: "delivery", at: isoAt(at), eventId, raw }))
  }

  const admin = (method: string, path: string, body?: unknown) =>
    call(method, path, { headers: { authorization: `Bearer ${options.adminToken ?? ""}` }, ...(body === undefined ? {} : { body }) })

  /** The target's clock: GET /_sim/clock with a control API, else the wall clock plus the skew measured. */
  const nowOnTarget = async (): Promise<number> => {
    if (virtualNow === undefined) return options.now() + (skew?.ms ?? 0)
    // A manual clock stands still between advances; a follow clock runs with real time from where it was read.
    return virtualNow.mode === "manual" ? virtualNow.at : virtualNow.at + (options.now() - virtualNow.wallAt)
  }

  /** Reads the target's virtual clock (with a control API), else measures its skew, so timelines are on its clock. */
  const syncClock = async () => {
    if (!hasControl) {
      skew = (await measureSkew()) ?? skew
      return
    }
    const r = await doFetch(`${origin}/_sim/clock`, { headers: { authorization: `Bearer ${options.adminToken}` } })
    const body = (await r.json().catch(() => ({}))) as { now?: string; mode?: string }
    const parsed = body.now === undefined ? Number.NaN : Date.parse(body.now)
    virtualNow = Number.isNaN(parsed) ? undefined : { at: parsed, mode: body.mode ?? "follow", wallAt: options.now() }
  }

  /**
   * The target's clock from its public status answer (GET /api/v1/status: its `timestamp`, else its `Date` header),
   * against the middle of the round trip on conform's clock. Undefined when the target gives neither.
   */
  const measureSkew = async (): Promise<ClockSkew | undefined> => {
    const sent = options.now()
    const response = await doFetch(`${origin}${actualPath(`${PUBLIC_ROOT}/status`)}`).catch(() => undefined)
    const received = options.now()
    if (response === undefined) return undefined
    const body = (await response.json().catch(() => ({}))) as { timestamp?: unknown }
    const stamped = typeof body.timestamp === "string" ? Date.parse(body.timestamp) : Number.NaN
    const dated = Date.parse(response.headers.get("date") ?? "")
    const middle = sent + (received - sent) / 2
    const half = Math.ceil((received - sent) / 2)
    if (!Number.isNaN(stamped)) return { ms: Math.round(stamped - middle), uncertaintyMs: half, source: "the `timestamp` of GET /api/v1/status" }
    if (!Number.isNaN(dated)) return { ms: Math.round(dated + 500 - middle), uncertaintyMs: half + 1_000, source: "the `Date` header of GET /api/v1/status" }
    return undefined
  }

  /**
   * Lets `ms` pass on the target: a clock advance with a control API (instant), else real waiting, announced with
   * `what` it waits for. Returns whether the wait was real (a "long wait" the report marks).
   */
  const wait = async (ms: number, what: string): Promise<"virtual" | "real"> => {
    if (hasControl) {
      const r = await admin("POST", "/_sim/clock/advance", { seconds: Math.ceil(ms / 1000) })
      if (r.status === 200) {
        await syncClock()
        return "virtual"
      }
    }
    options.onWait?.(what, ms)
    await options.sleep(ms)
    return "real"
  }

  const curlOf = (x: Exchange): string => curlCommand(`${origin}${actualPath(x.path)}`, x)

  /**
   * Opens an event stream and reads messages until `enough` says so, the stream ends, or `limitMs` of real time pass
   * (a failure bound); then closes it. Returns the status and the messages read.
   */
  /** Streams opened so far: the history numbers each connection (an id may repeat across them, never within one). */
  let connections = 0
  const readStream = async (
    path: string,
    headers: Record<string, string>,
    enough: (messages: ReadonlyArray<SseMessage>) => boolean,
    limitMs = 5_000
  ): Promise<{ exchange: Exchange; messages: ReadonlyArray<SseMessage> }> => {
    const at = await nowOnTarget()
    const connection = ++connections
    const response = await doFetch(`${origin}${actualPath(path)}`, { headers })
    const exchange: Exchange = {
      method: "GET",
      path,
      headers,
      body: undefined,
      status: response.status,
      responseHeaders: response.headers,
      json: null,
      text: "",
      at
    }
    const messages: Array<SseMessage> = []
    if (response.body === null || !(response.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
      const text = await response.text()
      return { exchange: { ...exchange, text, json: text }, messages }
    }
    const reader = response.body.getReader()
    const decoder = new TextDecoder()
    let buffer = ""
    let timedOut = false
    const bound = (options.bound ?? options.sleep)(limitMs).then(
      () => {
        timedOut = true
      },
      () => {
        timedOut = true
      }
    )
    try {
      while (!enough(messages) && !timedOut) {
        const chunk = await Promise.race([reader.read(), bound.then(() => ({ done: true, value: undefined }))])
        if (chunk.done || chunk.value === undefined) break
        buffer += decoder.decode(chunk.value, { stream: true })
        let end = buffer.indexOf("\n\n")
        while (end !== -1) {
          const message = parseSseMessage(buffer.slice(0, end))
          if (message !== undefined) {
            messages.push(message)
            options.record?.({ kind: "stream", at: isoAt(await nowOnTarget()), caller: callerOf(path, headers), connection, ...message })
          }
          buffer = buffer.slice(end + 2)
          end = buffer.indexOf("\n\n")
        }
      }
    } finally {
      await reader.cancel().catch(() => undefined)
    }
    return { exchange, messages }
  }

  /**
   * The contract's `servers` bases when GET /api/v1/status answers; the flat layout (every path at the root) when only
   * GET /status does; the prefix given, when one is (not looked for).
   */
  const detectLayout = async () => {
    if (layout === "prefix") return layout
    const answers = async (path: string) => {
      try {
        return (await doFetch(`${origin}${path}`)).status === 200
      } catch {
        return false
      }
    }
    if (!(await answers(`${PUBLIC_ROOT}/status`)) && (await answers("/status"))) layout = "flat"
    return layout
  }

  /** A short real pause while polling for something in flight (the failure bound's clock; never a virtual wait). */
  const pause = (ms: number) => (options.bound ?? options.sleep)(ms).catch(() => undefined)

  return {
    origin,
    hasControl,
    detectLayout,
    readStream,
    pause,
    call,
    admin,
    wait,
    syncClock,
    nowOnTarget,
    clockSkew: () => skew,
    actualPath,
    recordDelivery,
    recordingFetch,
    curlOf,
    timelineOf
  }
}

export type Target = ReturnType<typeof makeTarget>

/** The X-RateLimit-* numbers of an answer, or undefined when one is missing or not an integer. */
export const rateOf = (h: Headers): { limit: number; remaining: number; reset: number } | undefined => {
  const read = (name: string) => {
    const v = h.get(name)
    return v !== null && /^\d+$/.test(v) ? Number(v) : undefined
  }
  const limit = read("x-ratelimit-limit")
  const remaining = read("x-ratelimit-remaining")
  const reset = read("x-ratelimit-reset")
  return limit === undefined || remaining === undefined || reset === undefined ? undefined : { limit, remaining, reset }
}
