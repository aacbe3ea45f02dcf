/**
 * The text a conform run reads and writes about its exchanges: a replaying curl command (keys named, never printed),
 * the timeline rows of a report, and one message of an event stream. Pure: target.ts does the calling.
 */
import type { TimelineEntry } from "../report/model.ts"
import { isoAt } from "../sim/clock.ts"
import type { Exchange, SseMessage } from "./target.ts"

/** Single-quotes a word for a POSIX shell. */
export const shellQuote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`

/** Header names whose values are secrets: the reproducer names an environment variable instead. */
const SECRET_HEADERS: Record<string, string> = { "x-api-key": "$SOKONI_KEY", authorization: "Bearer $SOKONI_KEY" }

/** The one-line curl that replays an exchange at `url`; keys are read from $SOKONI_KEY, never printed. */
export const curlCommand = (url: string, x: Pick<Exchange, "method" | "headers" | "body">): string => {
  const parts = ["curl -sS -i", "-X", x.method, shellQuote(url)]
  for (const [name, value] of Object.entries(x.headers)) {
    const secret = SECRET_HEADERS[name.toLowerCase()]
    const shown = secret === undefined ? value : name.toLowerCase() === "authorization" && !value.startsWith("Bearer ") ? "$SOKONI_AUTH" : secret
    parts.push("-H", secret === undefined ? shellQuote(`${name}: ${shown}`) : `"${name}: ${shown}"`)
  }
  if (x.body !== undefined) parts.push("--data-binary", shellQuote(x.body))
  return parts.join(" ")
}

/** A report's timeline rows for exchanges: each request and its answer, cut short. */
export const timelineOf = (exchanges: ReadonlyArray<Exchange>): Array<TimelineEntry> =>
  exchanges.flatMap(
    (x): Array<TimelineEntry> => [
      { at: isoAt(x.at), kind: "request", text: `${x.method} ${x.path}${x.body === undefined ? "" : ` ${x.body.slice(0, 160)}`}` },
      { at: isoAt(x.at), kind: "response", text: `${x.status} ${x.text.slice(0, 200)}` }
    ]
  )

/** One server-sent event from its block of lines (without the blank line); undefined when it names no event. */
export const parseSseMessage = (block: string): SseMessage | undefined => {
  const message: Record<string, unknown> = {}
  for (const line of block.split("\n")) {
    const colon = line.indexOf(":")
    if (colon <= 0) continue
    const field = line.slice(0, colon)
    const value = line.slice(colon + 1).replace(/^ /, "")
    if (field === "data") {
      try {
        message.data = JSON.parse(value)
      } catch {
        message.data = value
      }
    } else if (field === "id" || field === "event") message[field] = value
  }
  return message.event === undefined ? undefined : (message as SseMessage)
}
