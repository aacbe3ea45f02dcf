/**
 * Route of the Stream family: `GET /stream` (D-058). Decodes the resume position (`Last-Event-ID` wins over
 * `since`) and the `events=` filter, and hands the stream the service opens to the transport. Nothing else.
 */
import { Effect } from "effect"
import { StreamService } from "../../app/stream.ts"
import { EVENT_NAMES } from "../../contract/catalogue.gen.ts"
import { fail } from "../../domain/errors.ts"
import { parsePosition } from "../../domain/sse.ts"
import { type Decoder, optional } from "../query.ts"
import { StreamBody, streamRoute } from "../route.ts"

const position: Decoder<number> = (raw, name) =>
  parsePosition(raw) ?? fail("VALIDATION_ERROR", `${name} must be an event-log position (a decimal integer), got ${JSON.stringify(raw)}`, { param: name })

const KNOWN: ReadonlySet<string> = new Set(EVENT_NAMES)

/** `events=a,b`: catalogue names only; an unknown one is a 400 naming it. */
const eventNames: Decoder<ReadonlySet<string>> = (raw, name) => {
  const names = raw.split(",").map((n) => n.trim())
  const unknown = names.filter((n) => !KNOWN.has(n))
  if (unknown.length > 0) return fail("VALIDATION_ERROR", `${name}: unknown event name(s) ${unknown.join(", ")}`, { param: name, invalid: unknown })
  return new Set(names)
}

const HEADERS = { "cache-control": "no-cache", "x-accel-buffering": "no" }

export const streamRoutes = [
  streamRoute("streamEvents", {
    query: { since: optional(position), events: optional(eventNames) },
    handle: ({ query, principal, request }) =>
      Effect.gen(function* () {
        // An empty Last-Event-ID means "no id yet" (the SSE standard's empty last event ID): `since` then applies.
        const header = request.headers["last-event-id"]?.trim()
        const resumed = header === undefined || header === "" ? undefined : position(header, "Last-Event-ID")
        if (typeof resumed === "object") return yield* resumed
        const stream = yield* StreamService.use((s) => s.open(principal, { after: resumed ?? query.since, names: query.events }))
        return new StreamBody("text/event-stream", HEADERS, stream)
      })
  })
]
