/**
 * The node:http transport over real sockets: header and body limits answered in the envelope, the port opened only
 * once the engine is built (postgres: after migration), a prompt stop that releases the pool, and the `serve`
 * process: SIGTERM exits 0, a taken port and a bad database URL exit 1 with one line and no stack.
 * Postgres parts run only with DATABASE_URL (an admin URL; each test works in a temporary database).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { request } from "node:http"
import { createServer, type Server, connect } from "node:net"
import { join } from "node:path"
import { PgClient } from "@effect/sql-pg"
import { Effect, Exit, Redacted, Scope } from "effect"
import { Reactivity } from "effect/reactivity"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { MAX_BODY_BYTES, type RunningServer, startServer } from "../../engine/http/node-server.ts"
import { withTemporaryDatabase } from "../../engine/store/pg-temp-db.ts"

const adminUrl = process.env.DATABASE_URL
const ROOT = join(import.meta.dirname, "..", "..")
const BIN = join(ROOT, "engine", "cli", "bin.ts")
const config = { store: "memory", clock: "manual", start: Date.parse("2026-11-23T08:00:00.000Z"), seed: 1, desk: "manual", adminToken: "t" } as const

const portOf = (server: RunningServer) => {
  const address = server.server.address()
  if (address === null || typeof address === "string") throw new Error("no port")
  return address.port
}

/** A port that was free a moment ago (listen on 0, close). */
const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const probe = createServer()
    probe.once("error", reject)
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address()
      probe.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0))
    })
  })

interface RawReply {
  readonly status: number
  readonly headers: Record<string, string | Array<string> | undefined>
  readonly body: string
}

const send = (port: number, method: string, path: string, headers: Record<string, string>, body?: string | Buffer) =>
  new Promise<RawReply>((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, method, path, headers }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }))
      res.on("error", reject)
    })
    req.on("error", reject)
    if (body !== undefined) req.write(body)
    req.end()
  })

/** Whether a TCP connection to the port is accepted (true) or refused (false). */
const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, "127.0.0.1")
    socket.once("connect", () => {
      socket.destroy()
      resolve(true)
    })
    socket.once("error", () => resolve(false))
  })

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

interface Finished {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

const spawnServe = (args: ReadonlyArray<string>) => {
  const child = spawn(process.execPath, [BIN, "serve", ...args], { cwd: ROOT, env: { ...process.env }, stdio: ["ignore", "pipe", "pipe"] })
  let stdout = ""
  let stderr = ""
  child.stdout?.on("data", (c: Buffer) => {
    stdout += c.toString("utf8")
  })
  child.stderr?.on("data", (c: Buffer) => {
    stderr += c.toString("utf8")
  })
  const finished = new Promise<Finished>((resolve) => child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr })))
  const ready = async (timeoutMs: number) => {
    const until = Date.now() + timeoutMs
    while (!stdout.includes("ready in")) {
      if (child.exitCode !== null || Date.now() > until) throw new Error(`serve did not start:\n${stdout}\n${stderr}`)
      await new Promise((r) => setTimeout(r, 25))
    }
  }
  return { child, finished, ready }
}

const withDeadline = <A>(promise: Promise<A>, ms: number, what: string) =>
  Promise.race([promise, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what} took over ${ms} ms`)), ms).unref())])

const stopsOnSigterm = async (child: ChildProcess, finished: Promise<Finished>) => {
  const started = Date.now()
  child.kill("SIGTERM")
  const done = await withDeadline(finished, 10_000, "exit after SIGTERM")
  expect(done.signal).toBeNull()
  expect(done.code).toBe(0)
  expect(Date.now() - started).toBeLessThan(10_000)
  return done
}

const oneLineNoStack = (output: string, prefix: string) => {
  const lines = output.split("\n").filter((l) => l !== "")
  expect(lines.filter((l) => l.startsWith(prefix))).toHaveLength(1)
  expect(lines.filter((l) => l.startsWith("sokoni:"))).toHaveLength(1)
  expect(lines.some((l) => l.startsWith("    at "))).toBe(false)
}

describe("sokoni serve (child process)", () => {
  it("exits 0 within 10 s of SIGTERM (memory store), after serving", async () => {
    const port = await freePort()
    const serve = spawnServe(["--port", String(port), "--clock", "manual", "--seed", "1"])
    try {
      await serve.ready(20_000)
      expect((await send(port, "GET", "/api/v1/status", {})).status).toBe(200)
    } finally {
      const done = await stopsOnSigterm(serve.child, serve.finished)
      expect(done.stdout.split("\n")[0]).toBe("seed 1")
    }
  })

  it("prints one line starting `sokoni: port` and exits 1 when the port is taken", async () => {
    const blocker: Server = createServer()
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve))
    const address = blocker.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    try {
      const done = await withDeadline(spawnServe(["--port", String(port)]).finished, 20_000, "serve on a taken port")
      expect(done.code).toBe(1)
      oneLineNoStack(`${done.stdout}\n${done.stderr}`, `sokoni: port ${port} is already in use`)
    } finally {
      await new Promise((resolve) => blocker.close(resolve))
    }
  })

  it("prints one line starting `sokoni: could not start` and exits 1 on a database it cannot reach", async () => {
    const port = await freePort()
    for (const url of ["postgres://nobody@127.0.0.1:1/nope", "not a url"]) {
      const done = await withDeadline(
        spawnServe(["--port", String(port), "--store", "postgres", "--database-url", url]).finished,
        20_000,
        "serve on a bad database URL"
      )
      expect(done.code).toBe(1)
      oneLineNoStack(`${done.stdout}\n${done.stderr}`, "sokoni: could not start")
      // the port was never opened
      expect(await accepts(port)).toBe(false)
    }
  })
})

/** Runs `use` with a temporary database on the server of DATABASE_URL, dropped afterwards. */
const withDatabase = async <A>(admin: string, use: (url: string) => Promise<A>): Promise<A> => {
  const scope = Effect.runSync(Scope.make())
  try {
    const url = await Effect.runPromise(Effect.provideService(withTemporaryDatabase(admin), Scope.Scope, scope))
    return await use(url)
  } finally {
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

/** Connections open on the database of `url`, as the server sees them. */
const connectionsTo = (admin: string, url: string) =>
  Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const sql = yield* PgClient.makeClient({ url: Redacted.make(admin) })
        const rows = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = ${new URL(url).pathname.slice(1)}`
        return Number(rows[0]?.n ?? -1)
      })
    ).pipe(Effect.provide(Reactivity.layer))
  )

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

describe.skipIf(adminUrl === undefined)(adminUrl === undefined ? "node-server on postgres (skipped: set DATABASE_URL)" : "node-server on postgres", () => {
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
        expect(Date.now() - began).toBeLessThan(2_000)
      }
      expect(await accepts(port)).toBe(false)
      expect(await connectionsTo(admin, url)).toBe(0)
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
      expect(Date.now() - began).toBeLessThan(2_000)
      expect(await connectionsTo(admin, url)).toBe(0)
    })
  })

  it("serve --store postgres exits 0 within 10 s of SIGTERM", async () => {
    await withDatabase(admin, async (url) => {
      const port = await freePort()
      const serve = spawnServe(["--port", String(port), "--clock", "manual", "--store", "postgres", "--database-url", url])
      try {
        await serve.ready(30_000)
        expect((await send(port, "GET", "/api/v1/status", {})).status).toBe(200)
      } finally {
        await stopsOnSigterm(serve.child, serve.finished)
      }
      expect(await connectionsTo(admin, url)).toBe(0)
    })
  })
})
