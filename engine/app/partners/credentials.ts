/**
 * Credentials in process memory: the SHA-256 of a presented key (keys are stored only as hashes) and the bounded maps
 * that remember hashes and principals so a keyed request reads nothing from the store (E-052).
 * Owns: hashing keys and bounding what is remembered. Does not own which credential works (domain/partners/) nor
 * reading keys (app/partners/service.ts).
 */
import { createHash } from "node:crypto"

/**
 * A map kept in process memory that starts afresh once it holds `max` entries: it bounds what a cache of credentials
 * may hold, never what it answers (a forgotten entry is computed or read again).
 */
export class BoundedMap<K, V> {
  readonly #entries = new Map<K, V>()
  readonly #max: number
  constructor(max: number) {
    this.#max = max
  }
  get(key: K): V | undefined {
    return this.#entries.get(key)
  }
  set(key: K, value: V): void {
    if (this.#entries.size >= this.#max) this.#entries.clear()
    this.#entries.set(key, value)
  }
}

/** `compute` remembered per key in a BoundedMap of `max` entries: each key is computed once while it is remembered. */
export const boundedMemo = <V>(max: number, compute: (key: string) => V) => {
  const memo = new BoundedMap<string, V>(max)
  return (key: string): V => {
    const known = memo.get(key)
    if (known !== undefined) return known
    const value = compute(key)
    memo.set(key, value)
    return value
  }
}

/** How many presented keys' hashes, and how many principals, one process remembers. */
export const MAX_REMEMBERED = 10_000

/** How long (engine time) a principal read from the store is trusted without reading it again (E-052). */
export const PRINCIPAL_TTL_MS = 1_000

/** The SHA-256 of a presented key: every keyed request hashes its key, so the hashes already computed are remembered
 * (in process memory only, never stored). */
export const hashKey = boundedMemo(MAX_REMEMBERED, (raw) => createHash("sha256").update(raw).digest("hex"))
