/**
 * The memory store's due-job queue: jobs kept sorted by (dueAt, seq), the order the Scheduler runs them in.
 * Owns: the ordering and lookup by seq. Does not own transactions (the memory adapter overlays a transaction's own
 * jobs and deletions on top of this committed queue).
 *
 * Why not a Map sorted on every look: the Scheduler peeks at the next job after every commit and on every poll, and a
 * busy engine holds tens of thousands of jobs (one expiry per quote): sorting them all on each peek made quote->trade
 * fall from thousands of operations a second to tens once 40,000 quotes were pending (docs/performance.md).
 * Insertion and deletion here are a binary search and one splice.
 */
import type { Job } from "./port.ts"

export const compareJobs = (a: Job, b: Job): number => a.dueAt - b.dueAt || a.seq - b.seq

export interface JobQueue {
  readonly insert: (job: Job) => void
  readonly delete: (seq: number) => void
  readonly get: (seq: number) => Job | undefined
  /** The first job in run order that `skip` does not exclude. */
  readonly first: (skip?: (job: Job) => boolean) => Job | undefined
  readonly size: () => number
}

export const makeJobQueue = (): JobQueue => {
  const sorted: Array<Job> = []
  const bySeq = new Map<number, Job>()

  /** Index of the first job not before `job` in run order. */
  const lowerBound = (job: Job) => {
    let low = 0
    let high = sorted.length
    while (low < high) {
      const mid = (low + high) >>> 1
      if (compareJobs(sorted[mid] as Job, job) < 0) low = mid + 1
      else high = mid
    }
    return low
  }

  const remove = (seq: number) => {
    const job = bySeq.get(seq)
    if (job === undefined) return
    bySeq.delete(seq)
    sorted.splice(lowerBound(job), 1)
  }

  return {
    insert: (job) => {
      remove(job.seq)
      bySeq.set(job.seq, job)
      sorted.splice(lowerBound(job), 0, job)
    },
    delete: remove,
    get: (seq) => bySeq.get(seq),
    first: (skip) => (skip === undefined ? sorted[0] : sorted.find((job) => !skip(job))),
    size: () => sorted.length
  }
}
