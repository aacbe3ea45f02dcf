/**
 * Sliding-window hit counts in PostgreSQL, shared by every engine process on one database (E-077). Owns the
 * `rate_windows` table and the `sokoni_rate_take` function, and nothing about tiers or headers (the rate-limit guard's).
 *
 * One row per bucket holds the timestamps (engine-clock ms) of the admitted requests of the last window. A take is ONE
 * statement: the function locks the bucket's row (INSERT ... ON CONFLICT DO UPDATE locks it even when it exists),
 * drops hits at or before `now - window`, admits when fewer than `limit` remain and appends `now`, all in the
 * statement's own transaction, so concurrent takes of one bucket from any process are serialised by the row lock and
 * never admit more than the limit. Buckets do not contend with each other nor with the store's writer lock.
 */
import { Effect } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import { StoreError } from "./port.ts"

/** Advisory lock key that serialises this module's DDL when several processes start at once ("Rate"). */
const DDL_LOCK_KEY = 0x52617465

export interface WindowTake {
  readonly allowed: boolean
  /** Hits in the window after this take. */
  readonly used: number
  /** Earliest hit in the window, or null when it is empty. */
  readonly oldest: number | null
}

const toStoreError = (operation: string) => (cause: SqlError.SqlError) =>
  new StoreError({ message: `postgres rate window: ${operation} failed: ${cause.message}`, cause })

const toNumber = (value: unknown): number => (typeof value === "number" ? value : Number(value))

export const makePgRateWindow = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql
    .withTransaction(
      Effect.gen(function* () {
        yield* sql`SELECT pg_advisory_xact_lock(${DDL_LOCK_KEY})`
        yield* sql`CREATE TABLE IF NOT EXISTS rate_windows (bucket text PRIMARY KEY, hits bigint[] NOT NULL)`
        yield* sql.unsafe(`CREATE OR REPLACE FUNCTION sokoni_rate_take(p_bucket text, p_now bigint, p_window bigint, p_limit integer)
          RETURNS TABLE (r_allowed boolean, r_used integer, r_oldest bigint) LANGUAGE plpgsql AS $fn$
          DECLARE v_hits bigint[];
          BEGIN
            INSERT INTO rate_windows AS w (bucket, hits) VALUES (p_bucket, '{}')
              ON CONFLICT (bucket) DO UPDATE SET hits = w.hits
              RETURNING w.hits INTO v_hits;
            v_hits := ARRAY(SELECT h FROM unnest(v_hits) AS h WHERE h > p_now - p_window ORDER BY h);
            r_allowed := cardinality(v_hits) < p_limit;
            IF r_allowed THEN v_hits := v_hits || p_now; END IF;
            UPDATE rate_windows SET hits = v_hits WHERE bucket = p_bucket;
            r_used := cardinality(v_hits);
            r_oldest := (SELECT min(h) FROM unnest(v_hits) AS h);
            RETURN NEXT;
          END
          $fn$`)
      })
    )
    .pipe(Effect.mapError(toStoreError("migration")))

  const take = (bucket: string, limit: number, windowMs: number, now: number): Effect.Effect<WindowTake, StoreError> =>
    sql<{ readonly r_allowed: boolean; readonly r_used: unknown; readonly r_oldest: unknown }>`
      SELECT r_allowed, r_used, r_oldest FROM sokoni_rate_take(${bucket}, ${now}, ${windowMs}, ${limit})`.pipe(
      Effect.mapError(toStoreError("take")),
      Effect.flatMap((rows) => {
        const row = rows[0]
        if (row === undefined) return Effect.fail(new StoreError({ message: "postgres rate window: take returned no row" }))
        return Effect.succeed({ allowed: row.r_allowed, used: toNumber(row.r_used), oldest: row.r_oldest === null ? null : toNumber(row.r_oldest) })
      })
    )

  return { take }
})
