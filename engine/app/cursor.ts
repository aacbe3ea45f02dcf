/**
 * Opaque pagination cursors. A cursor names the last sort key a page scanned and the scope it belongs to
 * (partition and list), so a cursor from another key, environment or list is refused with 400, as the spec asks.
 */
import { createHash } from "node:crypto"
import { fail, type ApiFailure } from "../domain/errors.ts"
import type { Doc } from "../store/port.ts"

const scopeTag = (scope: string) => createHash("sha256").update(scope).digest("base64url").slice(0, 12)

export const encodeCursor = (scope: string, sortKey: string): string => Buffer.from(JSON.stringify({ s: scopeTag(scope), k: sortKey })).toString("base64url")

export const decodeCursor = (scope: string, cursor: string): string | ApiFailure => {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"))
    if (typeof parsed === "object" && parsed !== null && "s" in parsed && "k" in parsed) {
      const { s, k } = parsed as { s: unknown; k: unknown }
      if (s === scopeTag(scope) && typeof k === "string") return k
    }
  } catch {
    // fall through: any undecodable cursor is simply unknown
  }
  return fail("VALIDATION_ERROR", "unknown cursor: pass the nextCursor of the previous page, with the same key and filters", { param: "cursor" })
}

/** Validates a `limit` query value against an endpoint's default and maximum (spec pagination table). */
export const checkLimit = (limit: number | undefined, defaultLimit: number, max: number): number | ApiFailure => {
  if (limit === undefined) return defaultLimit
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > max) {
    return fail("VALIDATION_ERROR", `limit must be a whole number from 1 to ${max}`, { param: "limit" })
  }
  return limit
}

export interface ScannedPage<A = unknown> {
  /** Bodies of the matching documents, in scan order. */
  readonly items: ReadonlyArray<A>
  /** Sort key of the last document examined: where the next page starts. */
  readonly lastKey: string | undefined
  readonly hasMore: boolean
}

/**
 * One page of a filtered list that examines at most `scanLimit` documents (spec: "scans at most 1000 records per
 * request"; a filtered page can be empty with hasMore true). `scanned` is what the store returned for up to
 * `scanLimit + 1` documents after the cursor; the extra one only tells whether more exist.
 */
export const scanPage = <A>(scanned: ReadonlyArray<Doc<A>>, limit: number, scanLimit: number, keep: (body: A) => boolean): ScannedPage<A> => {
  const window = scanned.slice(0, scanLimit)
  const items: Array<A> = []
  let lastKey: string | undefined
  for (const doc of window) {
    if (items.length === limit) break
    lastKey = doc.sortKey
    if (keep(doc.body)) items.push(doc.body)
  }
  const hasMore = lastKey !== undefined && (window.at(-1)?.sortKey !== lastKey || scanned.length > scanLimit)
  return { items, lastKey, hasMore }
}
