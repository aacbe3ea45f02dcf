/**
 * Routes of the console (spec/control.yaml, tag "Console"; E-380..E-383): its page and files (no token: the page
 * asks for it), its one read of the world, and its live feed. Decoding and framing only; the files are
 * engine/console/'s, the world ConsoleView's, the signals the event log's and ConsoleFeed's.
 */
import { Effect, Stream } from "effect"
import { ConsoleView } from "../../app/console-view.ts"
import { TradingService } from "../../app/trading/service.ts"
import { consoleFile } from "../../console/files.ts"
import { fail } from "../../domain/errors.ts"
import { ConsoleFeed } from "../../events/console-feed.ts"
import { EventLog } from "../../events/event-log.ts"
import { isoAt } from "../../sim/clock.ts"
import { ExecutionDesk } from "../../sim/desk.ts"
import { integer, optional, required, text } from "../query.ts"
import { controlRoute, RawBody, StreamBody } from "../route.ts"
import { policyWire } from "./control.ts"

const TYPES: Readonly<Record<string, string>> = {
  html: "text/html; charset=utf-8",
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  svg: "image/svg+xml"
}

/** The console file `name` as an answer, or 404 naming it. */
const served = (name: string) => {
  const content = consoleFile(name)
  const type = TYPES[name.slice(name.lastIndexOf(".") + 1)]
  if (content === undefined || type === undefined) return Effect.fail(fail("NOT_FOUND", `the console has no file ${name}`))
  return Effect.succeed(new RawBody(type, content))
}

/** How long a browser waits before reconnecting the feed after it ends (an engine restart, a reset). */
const RETRY_MS = 2000
const message = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`

/**
 * The feed: committed events of every partition and the ConsoleFeed's signals, merged. Both subscriptions are taken
 * before the first message (`hello`), so a console that reads its state on `hello` misses no change after it.
 */
const feed = Effect.gen(function* () {
  const log = yield* EventLog
  const signals = yield* ConsoleFeed
  return Stream.unwrap(
    Effect.gen(function* () {
      const committed = yield* log.subscribe
      const heard = yield* signals.subscribe
      const events = Stream.map(Stream.fromSubscription(committed), (e) => {
        const at = e.partition.lastIndexOf(":")
        return message("log", {
          partnerId: e.partition.slice(0, at),
          environment: e.partition.slice(at + 1),
          position: e.position,
          eventId: e.eventId,
          event: e.name,
          timestamp: isoAt(e.timestamp)
        })
      })
      const others = Stream.map(Stream.fromSubscription(heard), (signal) => message(signal.kind, signal))
      return Stream.concat(Stream.succeed(`retry: ${RETRY_MS}\n\n${message("hello", {})}`), Stream.merge(events, others))
    })
  )
})

const HEADERS = { "cache-control": "no-cache", "x-accel-buffering": "no" }

export const consoleRoutes = [
  controlRoute("getSimConsole", 200, { handle: () => served("index.html") }),
  controlRoute("getSimConsoleAsset", 200, {
    params: { file: required(text) },
    handle: ({ params }) => served(params.file)
  }),
  controlRoute("getSimConsoleState", 200, {
    query: { limit: optional(integer({ min: 1, max: 500 })) },
    handle: ({ query }) =>
      Effect.gen(function* () {
        const limit = query.limit ?? 100
        const world = yield* ConsoleView.use((v) => v.world(limit))
        const policy = yield* ExecutionDesk.use((d) => d.policy)
        const queue = yield* TradingService.use((t) => t.deskQueue)
        return { ...world, desk: { policy: policyWire(policy), queue: queue.slice(0, limit), queued: queue.length } }
      })
  }),
  controlRoute("streamSimConsole", 200, {
    handle: () => Effect.map(feed, (chunks) => new StreamBody("text/event-stream", HEADERS, chunks))
  })
]
