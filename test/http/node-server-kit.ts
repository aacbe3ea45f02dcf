/**
 * Helpers shared by the node:http transport tests (node-server.test.ts, in the test runner's own process, and
 * node-server.process.test.ts, which spawns `sokoni serve`): raw requests, port probes, temporary databases.
 */
import { request } from "node:http"
import { connect } from "node:net"
import { PgClient } from "@effect/sql-pg"
import { Effect, Exit, Redacted, Scope } from "effect"
import { Reactivity } from "effect/reactivity"
import type { RunningServer } from "../../engine/http/node-server.ts"
import { withTemporaryDatabase } from "../../engine/store/pg-temp-db.ts"

export const adminUrl = process.env.DATABASE_URL
export const config = { store: "memory", clock: "manual", start: Date.parse("2026-11-23T08:00:00.000Z"), seed: 1, desk: "manual", adminToken: "t" } as const

export const portOf = (server: RunningServer) => {
  const address = server.server.address()
  if (address === null || typeof address === "string") throw new Error("no port")
  return address.port
}

/** A port that was free a moment ago (listen on 0, close): the load tool's own. */
export { freePort } from "../../engine/load/run.ts"

export interface RawReply {
  readonly status: number
  readonly headers: Record<string, string | Array<string> | undefined>
  readonly body: string
}

export const send = (port: number, method: string, path: string, headers: Record<string, string>, body?: string | Buffer) =>
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
export const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, "127.0.0.1")
    socket.once("connect", () => {
      socket.destroy()
      resolve(true)
    })
    socket.once("error", () => resolve(false))
  })

/** Runs `use` with a temporary database on the server of DATABASE_URL, dropped afterwards. */
export const withDatabase = async <A>(admin: string, use: (url: string) => Promise<A>): Promise<A> => {
  const scope = Effect.runSync(Scope.make())
  try {
    const url = await Effect.runPromise(Effect.provideService(withTemporaryDatabase(admin), Scope.Scope, scope))
    return await use(url)
  } finally {
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

/** Connections open on the database of `url`, as the server sees them. */
export const connectionsTo = (admin: string, url: string) =>
  Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const sql = yield* PgClient.makeClient({ url: Redacted.make(admin) })
        const rows = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = ${new URL(url).pathname.slice(1)}`
        return Number(rows[0]?.n ?? -1)
      })
    ).pipe(Effect.provide(Reactivity.layer))
  )

/**
 * Connections still open on the database of `url` once the server has had time to notice closed sockets: a backend
 * leaves pg_stat_activity a moment after its client hangs up, so a pool closed just now can still show. Polls for
 * none, up to 20 s (a failure bound: a busy machine can be slow to reap backends); answers the last count (a pool that
 * was never closed keeps its connections, and the test fails).
 */
export const connectionsAfterClose = async (admin: string, url: string) => {
  let open = await connectionsTo(admin, url)
  for (let i = 0; i < 200 && open > 0; i++) {
    await new Promise((r) => setTimeout(r, 100))
    open = await connectionsTo(admin, url)
  }
  return open
}
