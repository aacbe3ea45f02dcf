/**
 * Helpers of the platform tests (audit, usage, reports, invoices): a fresh engine on either store, postgres on its
 * own temporary database (DATABASE_URL names the server).
 */
import { Effect, Exit, Scope } from "effect"
import { withTemporaryDatabase } from "../../engine/store/pg-temp-db.ts"
import { startEngine } from "./harness.ts"

export const DATABASE_URL = process.env.DATABASE_URL

export const engineOn = async (store: "memory" | "postgres") => {
  if (store === "memory") {
    const engine = startEngine()
    return { engine, dispose: () => engine.dispose() }
  }
  const scope = Effect.runSync(Scope.make())
  const url = await Effect.runPromise(Scope.provide(withTemporaryDatabase(DATABASE_URL ?? ""), scope))
  const engine = startEngine({ store: "postgres", databaseUrl: url })
  return {
    engine,
    dispose: async () => {
      await engine.dispose()
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  }
}
