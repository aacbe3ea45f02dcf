/**
 * The memory store's retention index (E-400, E-346) against a model (every live entry sorted by keepUntil, then id in
 * code units, on every look): after any adds (instants in and out of order, ids repeated) and removals, `due` reads
 * the model's entries up to a moment and none after, and `size` agrees.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { type KeepEntry, makeKeepQueue } from "../../engine/store/keep-queue.ts"

const byDropOrder = (a: KeepEntry, b: KeepEntry) => a.keepUntil - b.keepUntil || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

const command = fc.oneof(
  fc.record({ op: fc.constant("add" as const), keepUntil: fc.integer({ min: 0, max: 6 }), id: fc.string({ maxLength: 3 }) }),
  fc.record({ op: fc.constant("remove" as const), count: fc.integer({ min: 0, max: 5 }) }),
  fc.record({ op: fc.constant("look" as const), upTo: fc.integer({ min: -1, max: 7 }) })
)

describe("keep queue", () => {
  it("reads entries in drop order (keepUntil, then id) up to a moment, through adds and removals", () => {
    fc.assert(
      fc.property(fc.array(command, { maxLength: 80 }), (commands) => {
        const queue = makeKeepQueue()
        let model: Array<KeepEntry> = []
        for (const c of commands) {
          if (c.op === "add") {
            queue.add({ keepUntil: c.keepUntil, id: c.id })
            model = [...model, { keepUntil: c.keepUntil, id: c.id }].sort(byDropOrder)
          } else if (c.op === "remove") {
            queue.removeFirst(c.count)
            model = model.slice(c.count)
          } else {
            const expected = model.filter((e) => e.keepUntil <= c.upTo)
            for (let i = 0; i <= expected.length; i++) expect(queue.due(i, c.upTo)).toEqual(expected[i])
          }
          expect(queue.size()).toBe(model.length)
        }
      }),
      { numRuns: 400 }
    )
  })

  it("keeps many ties of one instant in id order without a look in between (a clock that stands still)", () => {
    const queue = makeKeepQueue()
    const ids = Array.from({ length: 3000 }, (_, i) => `q${(i * 7919) % 3001}`)
    for (const id of ids) queue.add({ keepUntil: 5, id })
    expect(queue.due(0, 4)).toBeUndefined()
    const sorted = [...ids].sort()
    expect(queue.due(0, 5)).toEqual({ keepUntil: 5, id: sorted[0] })
    queue.removeFirst(2000)
    expect(queue.due(0, 5)).toEqual({ keepUntil: 5, id: sorted[2000] })
    expect(queue.size()).toBe(1000)
  })
})
