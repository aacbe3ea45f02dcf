/**
 * Empties every table of a test database (its migrations kept), so the next engine on it starts a world of its own:
 * an engine on a store that holds a world continues it, its clock included (E-298), so tests that want a fresh world
 * per run on one database (creating one costs a second or more here) empty it first, as the API model does (E-202).
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { Reactivity } from "effect/reactivity"

const runSql = (url: string, statement: string) =>
  Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const sql = yield* PgClient.makeClient({ url: Redacted.make(url) })
        return (yield* sql.unsafe(statement)) as ReadonlyArray<Record<string, unknown>>
      })
    ).pipe(Effect.provide(Reactivity.layer))
  )

export const emptyTables = async (url: string): Promise<void> => {
  const rows = await runSql(url, "SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'sokoni_store_migrations'")
  if (rows.length === 0) return
  await runSql(url, `TRUNCATE ${rows.map((r) => `"${String(r.tablename)}"`).join(", ")} RESTART IDENTITY`)
}
