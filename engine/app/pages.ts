/**
 * Keyset pages over lists held in memory (the seeded reference families): the list comes sorted by a string key in
 * the order the API shows it, a cursor names the last key of the previous page, and it is bound to the list, the
 * caller's partition and every filter (engine/app/cursor.ts), so a cursor replayed with other filters, another key or
 * environment is refused with 400. Pure. Does not own sorting or filtering.
 */
import type { ApiFailure } from "../domain/errors.ts"
import { decodeCursor, encodeCursor } from "./cursor.ts"

export interface Page<A> {
  readonly items: ReadonlyArray<A>
  readonly count: number
  readonly hasMore: boolean
  readonly nextCursor: string | null
}

export interface PageRequest {
  /** The list, the partition and the filters, e.g. `dividends|<partition>|NSE|...`. */
  readonly scope: string
  readonly cursor: string | undefined
  readonly limit: number
}

/** The page after the cursor of `sorted`, whose keys are ascending (`asc`) or descending (`desc`). */
export const pageOf = <A>(sorted: ReadonlyArray<A>, key: (a: A) => string, order: "asc" | "desc", request: PageRequest): Page<A> | ApiFailure => {
  let start = 0
  if (request.cursor !== undefined) {
    const after = decodeCursor(request.scope, request.cursor)
    if (typeof after !== "string") return after
    const beyond = sorted.findIndex((a) => (order === "asc" ? key(a) > after : key(a) < after))
    start = beyond === -1 ? sorted.length : beyond
  }
  const items = sorted.slice(start, start + request.limit)
  const hasMore = start + items.length < sorted.length
  const last = items.at(-1)
  return {
    items,
    count: items.length,
    hasMore,
    nextCursor: hasMore && last !== undefined ? encodeCursor(request.scope, key(last)) : null
  }
}

/** The paging fields every list answer carries next to its items. */
export const pageMeta = <A>(page: Page<A>): Pick<Page<A>, "count" | "hasMore" | "nextCursor"> => ({
  count: page.count,
  hasMore: page.hasMore,
  nextCursor: page.nextCursor
})

/** A cursor scope from the list's name, the partition and the filters as given (undefined filters included). */
export const scopeOf = (list: string, partition: string, filters: ReadonlyArray<string | number | boolean | undefined>): string =>
  [list, partition, ...filters.map((f) => (f === undefined ? "" : String(f)))].join("|")
