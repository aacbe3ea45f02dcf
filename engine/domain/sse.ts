/**
 * Server-Sent Events framing for `GET /stream` (D-058): pure text functions, no time, no I/O.
 * Owns: the wire form of a message, of the `retry:` field and of a keep-alive comment, reading a resume position,
 * and the concurrent-stream caps per tier. Does not own which events are sent or when (app/stream.ts).
 */
import type { Tier } from "../app/principal.ts"

/** The spec's cap on concurrent streams per tier (spec "Limits"); the sandbox does not enforce one. */
export const STREAM_CAPS: Readonly<Record<Tier, number>> = { starter: 2, growth: 5, enterprise: 20 }

/** Contract: `retry: 3000` at open, a `: keep-alive` comment every 15 s. */
export const RETRY_MS = 3_000
export const KEEP_ALIVE_MS = 15_000
/**
 * How long a stream's slot outlives its last keep-alive (E-132): three missed beats. A stream the process saw close
 * frees its slot at once; one whose process died frees it when this lapses.
 */
export const SLOT_LEASE_MS = 45_000

export const retryField = (ms: number): string => `retry: ${ms}\n\n`
export const KEEP_ALIVE = ": keep-alive\n\n"

/**
 * One message: `id:` the log position, `event:` the name, `data:` the envelope as one line of JSON. JSON.stringify
 * escapes every line break inside strings, so the data is always a single line and the message cannot be split.
 */
export const frame = (position: number, name: string, envelope: unknown): string => `id: ${position}\nevent: ${name}\ndata: ${JSON.stringify(envelope)}\n\n`

/**
 * A resume position as sent in `Last-Event-ID` or `since`: a decimal integer of at most 15 digits (a safe integer).
 * Returns undefined when the text is not one.
 */
export const parsePosition = (text: string): number | undefined => (/^[0-9]{1,15}$/.test(text) ? Number(text) : undefined)
