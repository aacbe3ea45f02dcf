/**
 * The engine over node:http. It builds every layer first (store connected and migrated) and only then opens the
 * port, so no request can arrive before the engine is ready. Each request becomes an EngineRequest run through the
 * gateway as one Effect; limits answer in the spec's envelope (431 for headers, 413 for bodies); SIGINT/SIGTERM
 * stop accepting and admitting (a request on a kept-alive connection is refused with 503 and its connection closed),
 * let in-flight requests finish (up to 10 s), release the layers (the pool) and exit 0. The engine
 * itself is held by http/engine-host.ts, which can replace it whole (`POST /_sim/reset`).
 *
 * Why node:http directly and not effect/http-api: measured here, HttpApi alone serves 0.28x of bare node:http for
 * a constant body, under the 0.30x target before any engine work; node:http with one Effect per request keeps
 * 0.93x (docs/decisions.md E-013). This module is the HTTP transport, so it may use node's timers.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import { Server as NetServer, type Socket } from "node:net"
import { Effect, Fiber, Stream } from "effect"
import { ApiFailure, fail } from "../domain/errors.ts"
import type { EngineConfig } from "../runtime.ts"
import { bytesOf, type EngineRequest, type EngineResponse, errorResponse, REMEMBERED_BODY_CHARS } from "./exchange.ts"
import { wallDeadline } from "../sim/clock.ts"
import { makeEngineHost } from "./engine-host.ts"
import { MAX_HEADER_BYTES } from "./gateway.ts"
import { makeLanes } from "./lanes.ts"

/** Largest request body accepted; larger bodies answer 413 without being read further. */
export const MAX_BODY_BYTES = 1024 * 1024
/** How long a stopping server waits for in-flight requests. */
export const SHUTDOWN_GRACE_MS = 10_000
/**
 * How long a stopping server leaves a kept-alive connection that looks idle open (E-278): long enough for a request a
 * client sent just before the signal to be read and answered rather than reset; busy clients close theirs sooner.
 */
export const IDLE_LINGER_MS = 500

const tooLarge = errorResponse(new ApiFailure({ code: "VALIDATION_ERROR", message: `the request body exceeds ${MAX_BODY_BYTES} bytes`, status: 413 }))
const headersTooLarge = errorResponse(new ApiFailure({ code: "VALIDATION_ERROR", message: `request headers exceed ${MAX_HEADER_BYTES} bytes`, status: 431 }))
const unparsable = errorResponse(fail("VALIDATION_ERROR", "the request could not be parsed as HTTP/1.1"))
const refusedWhileStopping = errorResponse(fail("SERVICE_UNAVAILABLE", "the server is stopping; nothing was processed"), { "retry-after": "1" })

const netClose = NetServer.prototype.close

const rawResponse = (response: EngineResponse) => {
  const reason = response.status === 431 ? "Request Header Fields Too Large" : "Bad Request"
  return `HTTP/1.1 ${response.status} ${reason}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(response.body)}\r\nconnection: close\r\n\r\n${response.body}`
}

/**
 * Writes the answer's bytes with their exact length: a large answer's bytes encoded once per answer object (see
 * exchange.ts), a small one's text handed to the socket as it is (no Buffer of its own to collect, E-356).
 */
const write = (res: ServerResponse, response: EngineResponse) => {
  // A timeout fault's end: the connection closes with no answer, as a server that gave up would (E-372).
  if (response.hangUp === true) return void res.destroy()
  if (response.body.length < REMEMBERED_BODY_CHARS) {
    res.writeHead(response.status, { ...response.headers, "content-length": Buffer.byteLength(response.body) })
    return void res.end(response.body)
  }
  const bytes = bytesOf(response)
  res.writeHead(response.status, { ...response.headers, "content-length": bytes.length })
  res.end(bytes)
}

/**
 * Writes a streamed answer (E-131): the head at once, then each chunk as it comes, waiting for the socket to drain
 * when its buffer is full (a slow reader holds the stream back instead of growing memory). When the client goes away
 * the stream is interrupted, which runs its finalizers (the connection slot is freed); when the stream ends the
 * response ends. Returns the fiber, so a stopping server can end every open stream.
 */
const pipeStream = (res: ServerResponse, response: EngineResponse, stream: Stream.Stream<string>) => {
  // A stream's connection is not reused: when the stream ends, the socket closes with it.
  res.writeHead(response.status, { ...response.headers, connection: "close" })
  res.flushHeaders()
  const drained = Effect.callback<void>((resume) => {
    const done = () => {
      res.off("drain", done)
      res.off("close", done)
      resume(Effect.void)
    }
    res.on("drain", done)
    res.on("close", done)
    return Effect.sync(() => {
      res.off("drain", done)
      res.off("close", done)
    })
  })
  const fiber = Effect.runFork(
    Stream.runForEach(stream, (chunk) => (res.destroyed ? Effect.interrupt : res.write(chunk) ? Effect.void : drained)).pipe(
      Effect.ensuring(Effect.sync(() => void res.end()))
    )
  )
  res.on("close", () => void Effect.runFork(Fiber.interrupt(fiber)))
  return fiber
}

/** A path without its trailing slashes ("/" stays "/"); most paths have none, and are not scanned by a regex. */
const trimmed = (pathname: string) => (pathname.charCodeAt(pathname.length - 1) === 47 ? pathname.replace(/\/+$/, "") || "/" : pathname)

const toEngineRequest = (req: IncomingMessage, body: string | undefined): EngineRequest => {
  const raw = req.url ?? "/"
  const q = raw.indexOf("?")
  const pathname = q === -1 ? raw : raw.slice(0, q)
  const search = q === -1 ? "" : raw.slice(q)
  return {
    // node's parser (llhttp) accepts only upper-case methods, so this is the method as sent.
    method: req.method ?? "GET",
    path: pathname === "" ? "/" : trimmed(pathname),
    query: new URLSearchParams(search),
    search: search === "?" ? "" : search,
    headers: req.headers as Record<string, string | undefined>,
    body,
    remoteAddress: req.socket.remoteAddress
  }
}

export interface RunningServer {
  readonly server: Server
  readonly url: string
  /**
   * Stops accepting, waits for in-flight requests (at most SHUTDOWN_GRACE_MS), then releases every layer. Idle
   * kept-alive connections get `idleLingerMs` (IDLE_LINGER_MS) first, for a request already on its way; a caller that
   * knows none is (its own client, every answer read) passes 0 and the stop does not wait on the clock.
   */
  readonly stop: (options?: StopOptions) => Promise<void>
}

export interface StopOptions {
  readonly idleLingerMs?: number
  /**
   * Runs once every request has been answered, before the engine is released: `ask` puts a request to it (serve
   * reads the findings to print them). A failure here does not keep the engine from being released.
   */
  readonly beforeRelease?: (ask: (request: EngineRequest) => Promise<EngineResponse>) => Promise<void>
}

/** Builds the engine, then listens on `host:port`. Rejects (port in use, database unreachable) with one clear error. */
export const startServer = async (config: EngineConfig, port: number, host = "127.0.0.1"): Promise<RunningServer> => {
  const streams = new Set<Fiber.Fiber<void, unknown>>()
  /** Ends every open stream: they never finish on their own (their slots are freed as they end). */
  const endStreams = () => Promise.all([...streams].map((fiber) => Effect.runPromise(Fiber.interrupt(fiber)))).then(() => undefined)
  // The engine (and a fresh one after `POST /_sim/reset`, whose old world's streams end first: E-242).
  const engine = await makeEngineHost(config, { beforeReset: endStreams })
  // One partner's flood waits in its own lane instead of sharing the CPU with everyone's requests (E-404).
  const lanes = makeLanes()

  let stopping: Promise<void> | undefined
  const server = createServer({ maxHeaderSize: MAX_HEADER_BYTES, keepAliveTimeout: 5_000 }, (req, res) => {
    // A stopping server admits nothing new, even on a kept-alive connection (server.close() alone only stops new
    // connections): the request is refused untouched and its connection closed (E-278).
    if (stopping !== undefined) {
      req.resume()
      res.setHeader("connection", "close")
      return write(res, refusedWhileStopping)
    }
    const respond = (body: string | undefined) => {
      const request = toEngineRequest(req, body)
      lanes.enter(request, (leave) =>
        engine.handle(request, (response) => {
          // The answer is made: the lane's next request may start (a stream's body is not the engine's work).
          leave()
          // An answer written once the stop began is the connection's last, so the stop waits for nothing after it.
          if (stopping !== undefined) res.setHeader("connection", "close")
          if (response.stream === undefined) return write(res, response)
          const fiber = pipeStream(res, response, response.stream)
          streams.add(fiber)
          fiber.addObserver(() => streams.delete(fiber))
        })
      )
    }
    // A request that announces no body (most GETs) is answered at once, without waiting for its stream to end.
    if (req.headers["content-length"] === undefined && req.headers["transfer-encoding"] === undefined) {
      req.resume()
      respond(undefined)
      return
    }
    const chunks: Array<Buffer> = []
    let size = 0
    let refused = false
    req.on("data", (chunk: Buffer) => {
      if (refused) return
      size += chunk.length
      if (size > MAX_BODY_BYTES) {
        refused = true
        res.setHeader("connection", "close")
        write(res, tooLarge)
        res.on("finish", () => req.destroy())
        return
      }
      chunks.push(chunk)
    })
    req.on("end", () => {
      if (refused) return
      // A small body comes in one chunk (the usual command): decoded as it is, without a copy.
      respond(chunks.length === 0 ? undefined : (chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)).toString("utf8"))
    })
  })
  server.on("clientError", (error: NodeJS.ErrnoException, socket: Socket) => {
    if (!socket.writable) return socket.destroy()
    socket.end(rawResponse(error.code === "HPE_HEADER_OVERFLOW" ? headersTooLarge : unparsable))
  })

  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject)
      server.listen(port, host, () => {
        server.off("error", reject)
        resolve()
      })
    })
  } catch (error) {
    await engine.stop()
    throw error
  }

  const stop = (options: StopOptions = {}) => {
    stopping ??= (async () => {
      // net's close, not http's: http's also destroys every connection it sees idle at once, and a kept-alive one
      // whose next request is already on its way (sent before the signal, not yet read) would be cut. Those
      // connections are answered instead (503 and closed, see the handler) and the idle rest closed after a linger.
      const closed = new Promise<void>((resolve) => netClose.call(server, () => resolve()))
      // Open streams never finish on their own: end them now (their slots are freed) rather than wait out the grace.
      await endStreams()
      await Promise.race([closed, wallDeadline(options.idleLingerMs ?? IDLE_LINGER_MS)])
      server.closeIdleConnections()
      await Promise.race([closed, wallDeadline(SHUTDOWN_GRACE_MS)])
      server.closeAllConnections()
      await options.beforeRelease?.((request) => new Promise((resolve) => engine.handle(request, resolve))).catch(() => undefined)
      await engine.stop()
    })()
    return stopping
  }
  // The bound port, not the requested one: port 0 asks the system for a free port.
  const address = server.address()
  const boundPort = typeof address === "object" && address !== null ? address.port : port
  return { server, url: `http://${host}:${boundPort}`, stop }
}
