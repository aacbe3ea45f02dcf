/**
 * The store's PL/pgSQL functions (the write batch's apply, pg-batch.ts; the lock statement, pg-prefetch.ts), created
 * at start-up unless they exist. Each is named by a hash of its text, so a new build makes its own beside the old.
 */
import { Effect } from "effect"
import type { SqlClient, SqlError } from "effect/sql"

/**
 * Creates `signature`'s function with `create` unless it exists; processes starting together take turns on the
 * advisory lock `lockName` names, as the DO block is one transaction and the lock is held to its end.
 */
export const ensureFunction = (sql: SqlClient.SqlClient, lockName: string, signature: string, create: string): Effect.Effect<void, SqlError.SqlError> =>
  Effect.asVoid(
    sql.unsafe(`DO $ensure$ BEGIN
      PERFORM pg_advisory_xact_lock(hashtextextended('${lockName}', 0));
      IF to_regprocedure('${signature}') IS NULL THEN EXECUTE $create$${create}$create$; END IF;
    END $ensure$`)
  )
