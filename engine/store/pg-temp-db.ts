/**
 * Throwaway PostgreSQL databases for tests and CI. Owns: creating a uniquely named database on the server of an
 * admin URL and dropping it (WITH (FORCE)) when the scope closes. Does not own: the schema inside it (the store
 * migrates its own tables).
 *
 * The name is random on purpose (test infrastructure, never engine state): `sokoni_tmp_<pid>_<12 hex digits>`.
 */
import { randomBytes } from "node:crypto"
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted, type Scope } from "effect"
import { Reactivity } from "effect/reactivity"
import { StoreError } from "./port.ts"

/** Runs one statement on the admin database, on a connection opened and closed for it. */
const runAdmin = (adminUrl: string, statement: string): Effect.Effect<void, StoreError> =>
  Effect.scoped(
    Effect.gen(function* () {
      const sql = yield* PgClient.makeClient({ url: Redacted.make(adminUrl) })
      yield* sql.unsafe(statement)
    })
  ).pipe(
    Effect.provide(Reactivity.layer),
    Effect.mapError((cause) => new StoreError({ message: `temporary database: "${statement}" failed: ${cause.message}`, cause }))
  )

/** The URL of `adminUrl` with its database replaced by `database` (user, host, port and query kept). */
export const databaseUrlFor = (adminUrl: string, database: string): string => {
  const url = new URL(adminUrl)
  url.pathname = `/${database}`
  return url.toString()
}

/**
 * Creates a fresh database on the server of `adminUrl` (whose user must be allowed to CREATE DATABASE), yields its
 * URL, and drops it WITH (FORCE) when the scope closes. A failed drop is logged, not raised.
 */
export const withTemporaryDatabase = (adminUrl: string): Effect.Effect<string, StoreError, Scope.Scope> =>
  Effect.suspend(() => {
    const name = `sokoni_tmp_${process.pid}_${randomBytes(6).toString("hex")}`
    return Effect.acquireRelease(
      Effect.try({
        try: () => databaseUrlFor(adminUrl, name),
        catch: (cause) => new StoreError({ message: `temporary database: invalid admin URL: ${String(cause)}`, cause })
      }).pipe(Effect.tap(() => runAdmin(adminUrl, `CREATE DATABASE "${name}"`))),
      () =>
        runAdmin(adminUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).pipe(
          Effect.catchCause((cause) => Effect.logWarning(`temporary database ${name} was not dropped`, cause))
        )
    )
  })
