/**
 * The memory store's retention index (E-400): per collection and partition, the documents that carry a `keepUntil`,
 * in the order they may be dropped. Owns that order only; the memory adapter checks each entry against the document
 * it names (a document rewritten with another `keepUntil` leaves a stale entry, skipped when reached).
 *
 * Why buckets of one instant read from a moving head: a collection's `keepUntil` grows with the clock (a quote's TTL,
 * a stored answer's 24 h), so a new instant almost always goes at the end and leaves from the front, both O(1) here;
 * an instant out of order is placed by binary search. Within one instant the ids are only appended, and sorted when
 * the bucket is first read: on a clock that stands still (a manual one) every entry shares one instant, and keeping
 * it sorted on each add was a splice into the middle of the whole queue, O(n) per quote (E-346).
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

/** The ids of one instant; `ids[start..]` are still queued, in id order once `sorted`. */
interface Bucket {
  readonly keepUntil: number
  ids: Array<string>
  start: number
  sorted: boolean
}

/** Consumed slots are cut off once they are most of their array and more than this many. */
const COMPACT_AFTER = 1024

/**
 * Ties on the instant are common (quotes issued in one instant of a manual clock): they go by id in code units, as the
 * PostgreSQL adapter drops them (`ORDER BY keep_until, id COLLATE "C"`), so both stores drop the same documents
 * (E-299). `Array.prototype.sort` without a comparator orders strings by UTF-16 code units, as `<` does.
 */
const sortBucket = (bucket: Bucket) => {
  bucket.ids = bucket.ids.slice(bucket.start).sort()
  bucket.start = 0
  bucket.sorted = true
}

const appendTo = (bucket: Bucket, id: string) => {
  const last = bucket.ids[bucket.ids.length - 1]
  if (bucket.sorted && last !== undefined && bucket.ids.length > bucket.start && id < last) bucket.sorted = false
  bucket.ids.push(id)
}

export const makeKeepQueue = (): KeepQueue => {
  let buckets: Array<Bucket> = []
  let head = 0
  let count = 0

  /** The bucket of `keepUntil` at or after the head: found or placed by binary search (an instant out of order). */
  const bucketOf = (keepUntil: number): Bucket => {
    let low = head
    let high = buckets.length
    while (low < high) {
      const mid = (low + high) >>> 1
      if ((buckets[mid] as Bucket).keepUntil < keepUntil) low = mid + 1
      else high = mid
    }
    const found = buckets[low]
    if (found !== undefined && found.keepUntil === keepUntil) return found
    const bucket: Bucket = { keepUntil, ids: [], start: 0, sorted: true }
    buckets.splice(low, 0, bucket)
    return bucket
  }

  const add = (entry: KeepEntry) => {
    const last = buckets.length > head ? buckets[buckets.length - 1] : undefined
    if (last === undefined || last.keepUntil < entry.keepUntil) buckets.push({ keepUntil: entry.keepUntil, ids: [entry.id], start: 0, sorted: true })
    else appendTo(last.keepUntil === entry.keepUntil ? last : bucketOf(entry.keepUntil), entry.id)
    count++
  }

  const due = (offset: number, upTo: number): KeepEntry | undefined => {
    if (offset < 0 || offset >= count) return undefined
    let left = offset
    for (let i = head; i < buckets.length; i++) {
      const bucket = buckets[i] as Bucket
      const size = bucket.ids.length - bucket.start
      if (left < size) {
        if (bucket.keepUntil > upTo) return undefined
        if (!bucket.sorted) sortBucket(bucket)
        return { keepUntil: bucket.keepUntil, id: bucket.ids[bucket.start + left] as string }
      }
      left -= size
    }
    return undefined
  }

  const removeFirst = (removed: number) => {
    let left = Math.min(removed, count)
    count -= left
    while (left > 0 && head < buckets.length) {
      const bucket = buckets[head] as Bucket
      const size = bucket.ids.length - bucket.start
      if (left < size) {
        // What is removed is what `due` read, in id order.
        if (!bucket.sorted) sortBucket(bucket)
        bucket.start += left
        if (bucket.start > COMPACT_AFTER && bucket.start * 2 > bucket.ids.length) {
          bucket.ids = bucket.ids.slice(bucket.start)
          bucket.start = 0
        }
        left = 0
      } else {
        left -= size
        head++
      }
    }
    if (head === buckets.length) {
      buckets = []
      head = 0
    } else if (head > COMPACT_AFTER && head * 2 > buckets.length) {
      buckets = buckets.slice(head)
      head = 0
    }
  }

  return { add, due, removeFirst, size: () => count }
}
