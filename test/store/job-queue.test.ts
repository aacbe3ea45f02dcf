/**
 * The memory store's due-job queue against a model (a list sorted on every look): after any sequence of inserts
 * (including a seq inserted again with another due time) and deletes, `first` is the model's first job in
 * (dueAt, seq) order, with and without a skip predicate, and `get`/`size` agree.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { compareJobs, makeJobQueue } from "../../engine/store/job-queue.ts"
import type { Job } from "../../engine/store/port.ts"

const job = (seq: number, dueAt: number): Job => ({ seq, dueAt, kind: "k", payload: null })

const command = fc.oneof(
  fc.record({ op: fc.constant("insert" as const), seq: fc.integer({ min: 1, max: 30 }), dueAt: fc.integer({ min: 0, max: 10 }) }),
  fc.record({ op: fc.constant("delete" as const), seq: fc.integer({ min: 1, max: 30 }) })
)

describe("job queue", () => {
  it("keeps run order (dueAt, then seq) through inserts, re-inserts and deletes", () => {
    fc.assert(
      fc.property(fc.array(command, { maxLength: 80 }), fc.integer({ min: 1, max: 30 }), (commands, skipped) => {
        const queue = makeJobQueue()
        const model = new Map<number, Job>()
        for (const c of commands) {
          if (c.op === "insert") {
            queue.insert(job(c.seq, c.dueAt))
            model.set(c.seq, job(c.seq, c.dueAt))
          } else {
            queue.delete(c.seq)
            model.delete(c.seq)
          }
          const ordered = [...model.values()].sort(compareJobs)
          expect(queue.first()).toEqual(ordered[0])
          expect(queue.first((j) => j.seq === skipped)).toEqual(ordered.find((j) => j.seq !== skipped))
          expect(queue.size()).toBe(model.size)
          expect(queue.get(skipped)).toEqual(model.get(skipped))
        }
      }),
      { numRuns: 300 }
    )
  })

  it("orders equal due times by seq", () => {
    const queue = makeJobQueue()
    queue.insert(job(9, 5))
    queue.insert(job(3, 5))
    queue.insert(job(4, 1))
    expect(queue.first()?.seq).toBe(4)
    queue.delete(4)
    expect(queue.first()?.seq).toBe(3)
  })
})
