/**
 * What the Pact tests share: the webhook/stream envelope as the consumers state it, and a JSON call on the engine
 * for provider states. Owns no expectation of its own: each test says what it reads.
 */
import { MatchersV3 } from "@pact-foundation/pact"

const { like, regex } = MatchersV3

export const ISO = "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$"

/** The envelope of a webhook delivery or a stream message (`data:`), with the event's data as the consumer reads it. */
export const envelope = (event: string, data: Record<string, unknown>) => ({
  eventId: like("evt_0001"),
  event,
  timestamp: regex(ISO, "2026-11-23T08:00:00.000Z"),
  isSandbox: true,
  data
})

/** A JSON call on the engine at `base()` that throws on any status of 300 or more (a provider state must not half-fail). */
export const jsonCall =
  (base: () => string) =>
  async (method: string, path: string, body: unknown, headers: Record<string, string>): Promise<Record<string, any>> => {
    const response = await fetch(`${base()}${path}`, {
      method,
      headers: { "content-type": "application/json", ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    const json = (await response.json()) as Record<string, any>
    if (response.status >= 300) throw new Error(`${method} ${path} -> ${response.status} ${JSON.stringify(json)}`)
    return json
  }
