/**
 * Shared helpers of the reference-data HTTP tests: a sandbox partner on the harness's engine, error assertions,
 * following a list's cursors to the end, and the run's reference book as the engine builds it (seed 1, the
 * harness's start), for picking records the API has not announced yet.
 */
import { expect } from "vitest"
import { EXCHANGES } from "../../engine/domain/calendar.ts"
import { INSTRUMENTS } from "../../engine/domain/instruments.ts"
import { makeReferenceBook } from "../../engine/domain/reference/book.ts"
import { MONDAY_OPEN, type Reply, startEngine } from "./harness.ts"

export const SANDBOX = "/api/sandbox/v1/partner"
export const PROD = "/api/v1/partner"

export const book = (seed = 1) => makeReferenceBook(seed, MONDAY_OPEN, INSTRUMENTS, EXCHANGES)

export const expectError = (reply: Reply, status: number, code: string, param?: string, message?: RegExp) => {
  expect(reply.status).toBe(status)
  expect(reply.body.error.code).toBe(code)
  if (param !== undefined) expect(reply.body.error.param).toBe(param)
  if (message !== undefined) expect(reply.body.error.message).toMatch(message)
}

export const partnerEngine = async (options: { seed?: number } = {}) => {
  const engine = startEngine(options)
  const keys = await engine.newPartner()
  const get = (path: string, key = keys.sandboxKey, base = SANDBOX) => engine.call("GET", `${base}${path}`, { headers: { "x-api-key": key } })
  const advance = async (seconds: number) => {
    const r = await engine.admin("POST", "/_sim/clock/advance", { seconds })
    expect(r.status).toBe(200)
  }
  /** Every item of a paginated list, page by page (the key of the items array given), checking each envelope. */
  const all = async (path: string, itemsKey: string): Promise<Array<any>> => {
    const out: Array<any> = []
    let cursor: string | null = null
    for (let i = 0; i < 500; i++) {
      const sep = path.includes("?") ? "&" : "?"
      const r = await get(cursor === null ? path : `${path}${sep}cursor=${encodeURIComponent(cursor)}`)
      expect(r.status, JSON.stringify(r.body)).toBe(200)
      const items = r.body[itemsKey] as Array<any>
      expect(r.body.count).toBe(items.length)
      expect(r.body.nextCursor === null).toBe(!r.body.hasMore)
      out.push(...items)
      if (!r.body.hasMore) return out
      cursor = r.body.nextCursor
    }
    throw new Error("too many pages")
  }
  return { engine, keys, get, advance, all, dispose: engine.dispose }
}

export type PartnerEngine = Awaited<ReturnType<typeof partnerEngine>>
