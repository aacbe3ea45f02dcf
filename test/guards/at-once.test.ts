/**
 * Reads and writes made when called (`putHere`, `getHere`..., E-425/E-429) are yielded where they are called, in every
 * engine file: the scanner is test/support/at-once.ts, its fixtures below.
 */
import { describe, expect, it } from "vitest"
import { atOnceNames, notYieldedAtOnce } from "../support/at-once.ts"
import { engineFiles } from "../support/determinism.ts"

describe("reads and writes made when called", () => {
  it("are yielded at once wherever engine code calls them", () => {
    const files = engineFiles()
    expect(files.some((f) => f.text.includes("yield* putHere("))).toBe(true)
    expect(notYieldedAtOnce(files)).toEqual([])
    // The wrappers are found too (app/trading, events/webhook-delivery.ts).
    expect([...atOnceNames(files)]).toEqual(expect.arrayContaining(["saveOrder", "loadOrder", "putDelivery"]))
  })

  it("finds a call built to run later, through a collection and through a wrapper", () => {
    const file = (text: string) => [{ path: "engine/app/x.ts", text }]
    expect(notYieldedAtOnce(file("const f = function* () { yield* Orders.putHere(tx, 1) }"))).toEqual([])
    expect(notYieldedAtOnce(file("const later = Effect.andThen(check, putHere(tx, c, doc))"))).toEqual(["engine/app/x.ts:1 putHere"])
    expect(notYieldedAtOnce(file("Effect.forEach(xs, (x) => Orders.getHere(tx, x))"))).toEqual(["engine/app/x.ts:1 getHere"])
    // The clock read when called (E-461), on a service or a dependency record's service.
    expect(notYieldedAtOnce(file("const f = function* () { const now = yield* d.clock.nowHere() }"))).toEqual([])
    expect(notYieldedAtOnce(file("const later = Effect.map(clock.nowHere(), isoAt)"))).toEqual(["engine/app/x.ts:1 nowHere"])
    // A job booked when called (E-463).
    expect(notYieldedAtOnce(file("const g = function* () { yield* w.scheduler.scheduleHere(tx, k, 1, p) }"))).toEqual([])
    expect(notYieldedAtOnce(file("const later = Effect.andThen(check, scheduler.scheduleHere(tx, k, 1, p))"))).toEqual(["engine/app/x.ts:1 scheduleHere"])
    const wrapped = "const save = (tx: Tx, o: O) => Orders.putHere(tx, o)\nconst g = function* () { yield* save(tx, o) }\nconst h = Effect.zip(save(tx, o), x)"
    expect(notYieldedAtOnce(file(wrapped))).toEqual(["engine/app/x.ts:3 save"])
  })
})
