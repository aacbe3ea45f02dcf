/**
 * What a scripted webhook receiver reports of one request it got: when (engine clock), which event, the outcome the
 * sender saw, and the receiver-side signature check (hex HMAC-SHA256 of the exact bytes, with the secret the
 * receiver was scripted with, compared in constant time). The same view in-process (scenarios/runner.ts) and over
 * the wire (`POST /_sim/receivers/take`), so a scenario's `expect.received` means the same on both.
 * Owns the view only; the receivers themselves are sim/outbound.ts's.
 */
import { createHmac, timingSafeEqual } from "node:crypto"
import { isoAt } from "./clock.ts"
import type { ReceivedRequest } from "./outbound.ts"

export interface ReceivedView {
  readonly url: string
  readonly partnerId: string | null
  readonly at: string
  readonly event: string | null
  readonly eventId: string | null
  readonly data: unknown
  readonly isSandbox: boolean | null
  readonly outcome: "answered" | "timeout" | "unreachable"
  readonly status: number | null
  readonly latencyMs: number | null
  /** `unchecked` when the receiver was given no secret. */
  readonly signature: "valid" | "invalid" | "unchecked"
  /** The exact bytes received. */
  readonly body: string
}

const SIGNATURE_HEADER = "x-service-signature"

/** The signature verdict of the receiver: `secret` is the one it holds (undefined: it does not check). */
export const signatureVerdict = (r: Pick<ReceivedRequest, "headers" | "body">, secret: string | undefined): ReceivedView["signature"] => {
  if (secret === undefined) return "unchecked"
  const given = Buffer.from(r.headers[SIGNATURE_HEADER] ?? "", "hex")
  const expected = createHmac("sha256", secret).update(r.body).digest()
  return given.length === expected.length && timingSafeEqual(given, expected) ? "valid" : "invalid"
}

export const receivedView = (r: ReceivedRequest, secret: string | undefined = r.secret): ReceivedView => {
  let envelope: Record<string, unknown> = {}
  try {
    const parsed: unknown = JSON.parse(r.body)
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) envelope = parsed as Record<string, unknown>
  } catch {
    // not JSON: the view shows no event
  }
  return {
    url: r.url,
    partnerId: r.partnerId ?? null,
    at: isoAt(r.at),
    event: typeof envelope.event === "string" ? envelope.event : null,
    eventId: typeof envelope.eventId === "string" ? envelope.eventId : null,
    data: envelope.data ?? null,
    isSandbox: typeof envelope.isSandbox === "boolean" ? envelope.isSandbox : null,
    outcome: r.result.kind,
    status: r.result.kind === "answered" ? r.result.status : null,
    latencyMs: r.result.kind === "answered" ? r.result.latencyMs : null,
    signature: signatureVerdict(r, secret),
    body: r.body
  }
}
