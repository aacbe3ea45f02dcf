/**
 * The memory store's retention index (E-400): per collection and partition, the documents that carry a `keepUntil`,
 * in the order they may be dropped. Owns that order only; the memory adapter checks each entry against the document
 * it names (a document rewritten with another `keepUntil` leaves a stale entry, skipped when reached).
 *
 * Why a sorted array read from a moving head: a collection's `keepUntil` grows with the clock (a quote's TTL, a
 * stored answer's 24 h), so an entry almost always goes at the end and leaves from the front, both O(1) here; an
 * entry out of order is placed by binary search.
 */

export interface KeepEntry {
  readonly keepUntil: number
  readonly id: string
}

export interface KeepQueue {
  readonly add: (entry: KeepEntry) => void
  /** The entry `offset` places after the head, if any. */
  readonly at: (offset: number) => KeepEntry | undefined
  /** Removes the first `count` entries. */
  readonly removeFirst: (count: number) => void
  readonly size: () => number
}

/**
 * Whether `a` goes after `b`: later `keepUntil`, then (same instant) greater id by code units. Ties on the instant
 * are common (quotes issued in one instant of a manual clock), and the PostgreSQL adapter drops in the same order
 * (`ORDER BY keep_until, id COLLATE "C"`), so both stores drop the same documents (E-299).
 */
const keptLonger = (a: KeepEntry, b: KeepEntry): boolean => a.keepUntil > b.keepUntil || (a.keepUntil === b.keepUntil && a.id > b.id)

export const makeKeepQueue = (): KeepQueue => {
  let entries: Array<KeepEntry> = []
  let head = 0

  const add = (entry: KeepEntry) => {
    const last = entries[entries.length - 1]
    if (entries.length === head || last === undefined || !keptLonger(last, entry)) {
      entries.push(entry)
      return
    }
    let low = head
    let high = entries.length
    while (low < high) {
      const mid = (low + high) >>> 1
      if (!keptLonger(entries[mid] as KeepEntry, entry)) low = mid + 1
      else high = mid
    }
    entries.splice(low, 0, entry)
  }

  const removeFirst = (count: number) => {
    head = Math.min(entries.length, head + count)
    // The consumed front is cut off once it is most of the array, so the array stays about as long as the queue.
    if (head === entries.length) {
      entries = []
      head = 0
    } else if (head > 1024 && head * 2 > entries.length) {
      entries = entries.slice(head)
      head = 0
    }
  }

  return { add, at: (offset) => entries[head + offset], removeFirst, size: () => entries.length - head }
}
