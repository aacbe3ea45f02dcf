/**
 * The `postgres` tag (vitest.config.ts) marks every test that needs DATABASE_URL. Without it those tests skip (a
 * newcomer's `npm test`); CI's PostgreSQL pass runs exactly them (`vitest run --tags-filter=postgres`), and its
 * summary checks that every test skipped in the memory pass ran there (scripts/ci-summary.ts).
 */
export type StoreKind = "memory" | "postgres"

/** Options of a test or suite that runs on PostgreSQL only. */
export const onPostgres = { tags: ["postgres"] }

/** Options of one store's copy of a test run on both: the postgres copy carries the tag, the memory copy none. */
export const tagsFor = (store: StoreKind | string) => (store === "postgres" ? onPostgres : {})
