/**
 * SQL functions the typed tables' migrations read documents with, and that docs/storage.md's queries use: a
 * partition's partner and environment, and a body field as text, integer or number (NULL when it is not one, as the
 * adapter's column extractors in pg-tables.ts give). Frozen: a change is a new migration.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`CREATE FUNCTION sokoni_root_of(p text) RETURNS text LANGUAGE sql IMMUTABLE STRICT
    AS $$ SELECT substring(p from '^[^/|]*') $$`)
  yield* sql.unsafe(`CREATE FUNCTION sokoni_partner_of(p text) RETURNS text LANGUAGE sql IMMUTABLE STRICT AS $$
    SELECT CASE WHEN r = 'global' THEN NULL WHEN position(':' in r) = 0 THEN r ELSE split_part(r, ':', 1) END
    FROM (SELECT sokoni_root_of(p) AS r) AS root $$`)
  yield* sql.unsafe(`CREATE FUNCTION sokoni_environment_of(p text) RETURNS text LANGUAGE sql IMMUTABLE STRICT AS $$
    SELECT CASE WHEN position(':' in r) = 0 THEN NULL ELSE substr(r, position(':' in r) + 1) END
    FROM (SELECT sokoni_root_of(p) AS r) AS root $$`)
  yield* sql.unsafe(`CREATE FUNCTION sokoni_json_text(b jsonb, field text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN jsonb_typeof(b -> field) = 'string' THEN b ->> field END $$`)
  yield* sql.unsafe(`CREATE FUNCTION sokoni_json_number(b jsonb, field text) RETURNS numeric LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN jsonb_typeof(b -> field) = 'number' THEN (b ->> field)::numeric END $$`)
  // A safe integer (|n| <= 2^53 - 1), as Number.isSafeInteger: cents, milliseconds, positions.
  yield* sql.unsafe(`CREATE FUNCTION sokoni_json_int(b jsonb, field text) RETURNS bigint LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN n = trunc(n) AND abs(n) <= 9007199254740991 THEN n::bigint END
    FROM (SELECT sokoni_json_number(b, field) AS n) AS v $$`)
})
