/**
 * The node:http transport in the test runner's own process (so mutation testing sees it): header and body limits
 * answered in the envelope, request paths and bodies handed to the gateway as sent, the port opened only once the
 * engine is built (postgres: after migration), a prompt stop that releases the pool. The `serve` process itself is
 * tested in node-server.process.test.ts. Postgres parts run only with DATABASE_URL (each in a temporary database).
 */
import { request } from "node:http"
import { connect, createServer } from "node:net"
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { Reactivity } from "effect/reactivity"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { MAX_BODY_BYTES, type RunningServer, startServer } from "../../engine/http/node-server.ts"
import { accepts, adminUrl, config, connectionsAfterClose, connectionsTo, freePort, portOf, send, withDatabase } from "./node-server-kit.ts"
import { onPostgres } from "../support/stores.ts"

describe("node-server limits (real socket)", () => {
  let running: RunningServer
  let port: number
  beforeAll(async () => {
    running = await startServer(config, 0)
    port = portOf(running)
  })
  afterAll(() => running.stop())

  // Old engine: node's own header overflow closed the socket with a bare "431" and no body; the gateway had no limit.
  it("answers a 20,000-character header with 431 in the JSON envelope, and keeps serving", async () => {
    const r = await send(port, "GET", "/api/v1/status", { "x-padding": "a".repeat(20_000) })
    expect(r.status).toBe(431)
    expect(r.headers["content-type"]).toBe("application/json")
    expect(JSON.parse(r.body)).toEqual({ error: { code: "VALIDATION_ERROR", message: "request headers exceed 16384 bytes" } })
    expect((await send(port, "GET", "/api/v1/status", {})).status).toBe(200)
  })

  // Old engine: the whole body was buffered whatever its size; no 413.
  it("answers a body over 1 MiB with 413 in the envelope; exactly 1 MiB is read", async () => {
    const over = await send(port, "POST", "/api/sandbox/v1/partner/trade", { "content-type": "application/json" }, Buffer.alloc(MAX_BODY_BYTES + 1, 0x20))
    expect(over.status).toBe(413)
    expect(over.headers["content-type"]).toBe("application/json")
    expect(JSON.parse(over.body)).toEqual({ error: { code: "VALIDATION_ERROR", message: "the request body exceeds 1048576 bytes" } })
    const padded = Buffer.alloc(MAX_BODY_BYTES, 0x20)
    padded.write("{}", 0)
    const exact = await send(port, "POST", "/api/sandbox/v1/partner/trade", { "content-type": "application/json" }, padded)
    expect(exact.status).toBe(401)
    expect(JSON.parse(exact.body).error.code).toBe("AUTH_MISSING")
    expect((await send(port, "GET", "/api/v1/status", {})).status).toBe(200)
  })

  /** The raw bytes a request gets back, read off the socket until the server closes it. */
  const rawExchange = (bytes: string) =>
    new Promise<string>((resolve, reject) => {
      const socket = connect(port, "127.0.0.1", () => socket.write(bytes))
      const chunks: Array<Buffer> = []
      socket.on("data", (c: Buffer) => chunks.push(c))
      socket.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
      socket.on("error", reject)
    })

  it("names 431 by its reason phrase on the wire, with the body's exact length and connection: close", async () => {
    const text = await rawExchange(`GET /api/v1/status HTTP/1.1\r\nhost: x\r\nx-padding: ${"a".repeat(20_000)}\r\n\r\n`)
    const [head = "", body = ""] = text.split("\r\n\r\n")
    expect(head.split("\r\n")[0]).toBe("HTTP/1.1 431 Request Header Fields Too Large")
    expect(head).toContain("\r\nconnection: close")
    expect(head).toContain(`\r\ncontent-length: ${Buffer.byteLength(body)}`)
    expect(JSON.parse(body).error.code).toBe("VALIDATION_ERROR")
  })

  it("closes the connection after a 413, so the rest of the oversized body is never read", async () => {
    const over = await send(port, "POST", "/api/sandbox/v1/partner/trade", { "content-type": "application/json" }, Buffer.alloc(MAX_BODY_BYTES + 10, 0x20))
    expect(over.status).toBe(413)
    expect(over.headers.connection).toBe("close")
  })

  it("hands the gateway the path without trailing slashes, and the query string as sent", async () => {
    const slashed = await send(port, "GET", "/api/v1/status///", {})
    expect(slashed.status).toBe(200)
    expect(JSON.parse(slashed.body).status).toBe("operational")
    expect((await send(port, "GET", "/api/v1/status?", {})).status).toBe(200)
    // the query reaches the decoders: an invalid limit on a list is refused with its parameter named
    const admin = { authorization: "Bearer t", "content-type": "application/json" }
    const partner = JSON.parse((await send(port, "POST", "/_sim/partners", admin, JSON.stringify({ businessName: "Query Co", email: "q@q.test" }))).body)
    const key = partner.sandboxKey
    expect(typeof key).toBe("string")
    const refused = await send(port, "GET", "/api/sandbox/v1/partner/stocks?limit=abc", { "x-api-key": key })
    expect(refused.status).toBe(400)
    expect(JSON.parse(refused.body).error).toMatchObject({ code: "INVALID_TYPE", param: "limit" })
    // and the root alone is a path, not an empty string, however many slashes it is sent with
    for (const root of ["/", "//"]) {
      const r = await send(port, "GET", root, {})
      expect([r.status, JSON.parse(r.body).error.message]).toEqual([404, "no route GET /"])
    }
  })

  it("hands the gateway the socket's peer address, which the ipAllowlist checks (D-127)", async () => {
    const admin = { authorization: "Bearer t", "content-type": "application/json" }
    const partner = JSON.parse((await send(port, "POST", "/_sim/partners", admin, JSON.stringify({ businessName: "Peer Co", email: "p@p.test" }))).body)
    const headers = { "x-api-key": partner.sandboxKey, "content-type": "application/json" }
    const patch = (list: ReadonlyArray<string>, key: string) =>
      send(port, "PATCH", "/api/sandbox/v1/partner/settings", { ...headers, "idempotency-key": key }, JSON.stringify({ ipAllowlist: list }))
    expect((await patch(["127.0.0.1/32", "::1"], "node-server-allow-loopback")).status).toBe(200)
    expect((await send(port, "GET", "/api/sandbox/v1/partner/wallet", headers)).status).toBe(200)
    expect((await patch(["192.0.2.0/24"], "node-server-allow-elsewhere")).status).toBe(200)
    const refused = await send(port, "GET", "/api/sandbox/v1/partner/wallet", headers)
    expect(refused.status).toBe(403)
    expect(JSON.parse(refused.body).error.message).toMatch(/127\.0\.0\.1/)
  })

  it("keys idempotency on the query string as sent: another query is another request, a bare `?` is none", async () => {
    const admin = { authorization: "Bearer t", "content-type": "application/json" }
    const partner = JSON.parse((await send(port, "POST", "/_sim/partners", admin, JSON.stringify({ businessName: "Idem Co", email: "i@i.test" }))).body)
    const headers = { "x-api-key": partner.sandboxKey, "content-type": "application/json", "idempotency-key": "node-server-query-0001" }
    const body = JSON.stringify({ externalId: "ns-user-1", email: "u1@i.test" })
    const first = await send(port, "POST", "/api/sandbox/v1/partner/users", headers, body)
    expect(first.status).toBe(201)
    const bare = await send(port, "POST", "/api/sandbox/v1/partner/users?", headers, body)
    expect(bare.status).toBe(201)
    expect(bare.body).toBe(first.body)
    const other = await send(port, "POST", "/api/sandbox/v1/partner/users?x=1", headers, body)
    expect(other.status).toBe(422)
    expect(JSON.parse(other.body).error.code).toBe("IDEMPOTENCY_KEY_REUSED")
  })

  it("reads a chunked body to its end, and answers a declared empty body as no body", async () => {
    const admin = { authorization: "Bearer t", "content-type": "application/json" }
    const chunked = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request({ host: "127.0.0.1", port, method: "POST", path: "/_sim/partners", headers: { ...admin, "transfer-encoding": "chunked" } }, (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (c: Buffer) => chunks.push(c))
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }))
      })
      req.on("error", reject)
      req.write('{"businessName":"Chunk')
      req.write('ed Co","email":"c@c.test"}')
      req.end()
    })
    expect(chunked.status).toBe(201)
    expect(JSON.parse(chunked.body).businessName).toBe("Chunked Co")
    const empty = await send(port, "POST", "/_sim/partners", { ...admin, "content-length": "0" })
    expect(empty.status).toBe(400)
    expect(JSON.parse(empty.body).error).toMatchObject({ code: "MISSING_PARAM", param: "body" })
  })

  it("answers with content-length equal to the byte length of the body sent", async () => {
    const r = await send(port, "GET", "/api/v1/status", {})
    expect(Number(r.headers["content-length"])).toBe(Buffer.byteLength(r.body))
  })

  it("answers a request that is not HTTP with 400 in the envelope", async () => {
    const text = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, "127.0.0.1", () => socket.write("NOT HTTP AT ALL\r\n\r\n"))
      const chunks: Array<Buffer> = []
      socket.on("data", (c: Buffer) => chunks.push(c))
      socket.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
      socket.on("error", reject)
    })
    expect(text.startsWith("HTTP/1.1 400 Bad Request\r\n")).toBe(true)
    expect(JSON.parse(text.slice(text.indexOf("\r\n\r\n") + 4)).error.code).toBe("VALIDATION_ERROR")
  })
})

describe("startServer and stop (memory)", () => {
  it("rejects with the listen error when the port is taken, and the port stays the other server's", async () => {
    const blocker = createServer()
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve))
    const address = blocker.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    try {
      await expect(startServer(config, port)).rejects.toMatchObject({ code: "EADDRINUSE" })
      expect(await accepts(port)).toBe(true)
    } finally {
      await new Promise((resolve) => blocker.close(resolve))
    }
  })

  it("stops once however often stop() is called, and the port is closed after", async () => {
    const running = await startServer(config, 0)
    const port = portOf(running)
    expect(running.url).toBe(`http://127.0.0.1:${port}`)
    expect((await send(port, "GET", "/api/v1/status", {})).status).toBe(200)
    const first = running.stop()
    expect(running.stop()).toBe(first)
    await first
    expect(await accepts(port)).toBe(false)
  })
})

/** Takes the migrator's table lock in an open transaction, so a starting engine waits in its migration. */
const holdMigrationLock = async (url: string) => {
  const locked = Promise.withResolvers<void>()
  const release = Promise.withResolvers<void>()
  const done = Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const sql = yield* PgClient.makeClient({ url: Redacted.make(url) })
        yield* sql.withTransaction(
          Effect.gen(function* () {
            yield* sql`LOCK TABLE sokoni_store_migrations IN ACCESS EXCLUSIVE MODE`
            locked.resolve()
            yield* Effect.promise(() => release.promise)
          })
        )
      })
    ).pipe(Effect.provide(Reactivity.layer))
  )
  done.catch((error: unknown) => locked.reject(error))
  await locked.promise
  return async () => {
    release.resolve()
    await done
  }
}

describe.skipIf(adminUrl === undefined)(
  adminUrl === undefined ? "node-server on postgres (skipped: set DATABASE_URL)" : "node-server on postgres",
  onPostgres,
  () => {
    const admin = adminUrl ?? ""

    // Old engine: the port opened before the store had migrated, so the first requests answered 500.
    it("opens the port only after migration: refused while migrating, 200 on the first request after", async () => {
      await withDatabase(admin, async (url) => {
        const pgConfig = { ...config, store: "postgres", databaseUrl: url } as const
        // a first start creates the schema (and the migrator's table, whose lock the second start must take)
        const first = await startServer(pgConfig, 0)
        await first.stop()

        const release = await holdMigrationLock(url)
        const port = await freePort()
        let settled = false
        const starting = startServer(pgConfig, port).finally(() => {
          settled = true
        })
        try {
          for (let i = 0; i < 8; i++) {
            await new Promise((r) => setTimeout(r, 50))
            expect(settled).toBe(false)
            expect(await accepts(port)).toBe(false)
          }
        } finally {
          await release()
        }
        const running = await starting
        try {
          const status = await send(port, "GET", "/api/v1/status", {})
          expect(status.status).toBe(200)
          expect(JSON.parse(status.body).status).toBe("operational")
        } finally {
          const began = Date.now()
          await running.stop()
          // The old engine hung for over 20 s here; 10 s is the bound, and leaves room for a loaded machine.
          expect(Date.now() - began).toBeLessThan(10_000)
        }
        expect(await accepts(port)).toBe(false)
        expect(await connectionsAfterClose(admin, url)).toBe(0)
      })
    })

    it("stop() finishes promptly with a keep-alive connection open, and releases the pool", async () => {
      await withDatabase(admin, async (url) => {
        const running = await startServer({ ...config, store: "postgres", databaseUrl: url }, 0)
        const port = portOf(running)
        const partner = await send(
          port,
          "POST",
          "/_sim/partners",
          { authorization: "Bearer t", "content-type": "application/json", connection: "keep-alive" },
          JSON.stringify({ businessName: "Pool Partner", email: "p@p.test" })
        )
        expect(partner.status).toBe(201)
        expect(await connectionsTo(admin, url)).toBeGreaterThan(0)
        const began = Date.now()
        await running.stop()
        // An open keep-alive socket once held stop() for over 20 s; 10 s is the bound for in-flight requests.
        expect(Date.now() - began).toBeLessThan(10_000)
        expect(await connectionsAfterClose(admin, url)).toBe(0)
      })
    })
  }
)
