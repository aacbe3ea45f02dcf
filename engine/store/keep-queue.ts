/**
 * The memory store's retention index (E-400): per collection and partition, the documents that carry a `keepUntil`,
 * in the order they may be dropped. Owns that order only; the memory adapter checks each entry against the document
 * it names (a document rewritten with another `keepUntil` leaves a stale entry, skipped when reached).
 *
 * Why arrays read from a moving head: a collection's `keepUntil` grows with the clock (a quote's TTL, a stored
 * answer's 24 h), so a new entry almost always goes at the end and leaves from the front, both O(1) here; an instant
 * out of order is placed by binary search. Within the last instant the ids are only appended, and sorted when first
 * read: on a clock that stands still (a manual one) every entry shares one instant, and keeping it sorted on each add
 * was a splice into the middle of the whole queue, O(n) per quote (E-346).
 */

export interface KeepEntry {
  readonly keepUntil: number
  readonly id: string
}

export interface KeepQueue {
  readonly add: (entry: KeepEntry) => void
  /**
   * The entry `offset` places after the head, if there is one and it may go by `upTo` (its `keepUntil` is not later).
   * An instant not yet due is never sorted: a quote's look at the head costs nothing on a clock that stands still.
   */
  readonly due: (offset: number, upTo: number) => KeepEntry | undefined
  /** Removes the first `count` entries. */
  readonly removeFirst: (count: number) => void
  readonly size: () => number
}

/** Consumed slots are cut off once they are most of their arrays and more than this many. */
const COMPACT_AFTER = 1024

/**
 * Ties on the instant are common (quotes issued in one instant of a manual clock): they go by id in code units, as the
 * PostgreSQL adapter drops them (`ORDER BY keep_until, id COLLATE "C"`), so both stores drop the same documents
 * (E-299). `Array.prototype.sort` without a comparator orders strings by UTF-16 code units, as `<` does.
 *
 * Two parallel arrays, not an object per entry or per instant (E-482): an instant is a double in `instants` (unboxed in
 * a double array) and its id a slot in `ids`, about 14 bytes an entry where a bucket per distinct instant (its object,
 * its boxed instant, its array and that array's store) kept some 75 and three to four objects, and a flood of
 * quotes on a clock that moves has a distinct instant per quote. Entries are in instant order; within an instant in
 * id order, but for the last instant's run, which is appended to as it comes and sorted when it is first read or
 * removed from, or when a later instant closes it (E-346: a clock that stands still appends every quote to one run).
 */
export const makeKeepQueue = (): KeepQueue => {
  let instants: Array<number> = []
  let ids: Array<string> = []
  let head = 0
  /** The last instant's run starts at `tailStart` and is out of id order. */
  let tailDirty = false
  let tailStart = 0

  /** The first index at or after the head whose instant is `keepUntil` or later. */
  const lowerBound = (keepUntil: number) => {
    let low = head
    let high = instants.length
    while (low < high) {
      const mid = (low + high) >>> 1
      if ((instants[mid] as number) < keepUntil) low = mid + 1
      else high = mid
    }
    return low
  }

  const sortTail = () => {
    if (!tailDirty) return
    const run = ids.slice(tailStart).sort()
    for (let i = 0; i < run.length; i++) ids[tailStart + i] = run[i] as string
    tailDirty = false
  }

  /** An instant before the last one: placed by binary search among runs that are all in id order. */
  const insertBefore = (entry: KeepEntry) => {
    let low = head
    let high = instants.length
    while (low < high) {
      const mid = (low + high) >>> 1
      const at = instants[mid] as number
      if (at < entry.keepUntil || (at === entry.keepUntil && (ids[mid] as string) <= entry.id)) low = mid + 1
      else high = mid
    }
    instants.splice(low, 0, entry.keepUntil)
    ids.splice(low, 0, entry.id)
    if (tailDirty) tailStart++
  }

  const add = (entry: KeepEntry) => {
    const last = instants.length - 1
    if (last < head || (instants[last] as number) < entry.keepUntil) {
      // A later instant closes the last run: it is put in id order before it stops being the last.
      sortTail()
      instants.push(entry.keepUntil)
      ids.push(entry.id)
    } else if (instants[last] === entry.keepUntil) {
      if (!tailDirty && (ids[last] as string) > entry.id) {
        tailDirty = true
        tailStart = lowerBound(entry.keepUntil)
      }
      instants.push(entry.keepUntil)
      ids.push(entry.id)
    } else insertBefore(entry)
  }

  const due = (offset: number, upTo: number): KeepEntry | undefined => {
    const at = head + offset
    if (offset < 0 || at >= instants.length) return undefined
    const keepUntil = instants[at] as number
    if (keepUntil > upTo) return undefined
    if (tailDirty && at >= tailStart) sortTail()
    return { keepUntil, id: ids[at] as string }
  }

  const removeFirst = (removed: number) => {
    if (removed <= 0) return
    // What is removed is what `due` read, in id order.
    if (tailDirty && head + removed > tailStart) sortTail()
    head = Math.min(head + removed, instants.length)
    if (head === instants.length) {
      instants = []
      ids = []
      head = 0
      tailDirty = false
    } else if (head > COMPACT_AFTER && head * 2 > instants.length) {
      instants = instants.slice(head)
      ids = ids.slice(head)
      tailStart -= head
      head = 0
    }
  }

  return { add, due, removeFirst, size: () => instants.length - head }
}
