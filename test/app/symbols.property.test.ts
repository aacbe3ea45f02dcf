/**
 * Symbols under random chains of symbol changes (D-340, D-341, E-230), on the memory store: every listing resolves by
 * its current symbol and keeps its identity, every symbol it had before answers 404 naming the current one, the
 * catalogue never shows a symbol twice, stored records find their listing under any of its symbols, and a process
 * started afterwards (loading the committed documents) answers exactly as the one that made the changes.
 */
import { Effect, Layer } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { Symbols } from "../../engine/app/symbols.ts"
import { ApiFailure } from "../../engine/domain/errors.ts"
import { INSTRUMENTS, type Instrument } from "../../engine/domain/instruments.ts"
import { MemoryStoreLayer } from "../../engine/store/memory.ts"
import { Store } from "../../engine/store/port.ts"

// A few NSE listings and the new tickers they may take (none is a catalogue ticker on NSE).
const LISTINGS = ["SCOM.KE", "EQTY.KE", "KCB.KE", "BAT.KE"]
const TICKERS = ["SAF", "SAFCOM", "EQG", "KCBG", "BATK", "NEWCO", "ALPHA", "BETA"]

const step = fc.record({ listing: fc.constantFrom(...LISTINGS), ticker: fc.constantFrom(...TICKERS) })

describe("Symbols through random symbol changes", () => {
  it("resolves current symbols, points retired ones at their successor, and reloads the same state", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 12 }), async (steps) => {
        const run = Effect.gen(function* () {
          const store = yield* Store
          const symbols = yield* Symbols
          const used = new Set(INSTRUMENTS.map((i) => i.symbol))
          const history = new Map<string, Array<string>>(LISTINGS.map((s) => [s, [s]]))
          let at = Date.parse("2026-11-23T00:00:00.000Z")
          for (const { listing, ticker } of steps) {
            const next = `${ticker}.KE`
            // The engine never reuses a symbol (D-341): the model skips what the action would refuse with 409.
            if (used.has(next)) continue
            used.add(next)
            const instrument = INSTRUMENTS.find((i) => i.id === listing) as Instrument
            at += 86_400_000
            yield* store.transact((tx) => symbols.renameIn(tx, symbols.current(instrument), next, `ca_${at}`, at))
            history.get(listing)?.push(next)
          }
          const check = (s: Symbols["Service"]) => {
            const shown = s.catalogue().map((i) => i.symbol)
            expect(new Set(shown).size).toBe(shown.length)
            for (const [id, names] of history) {
              const now = names.at(-1) as string
              const found = s.resolve(now)
              expect(found instanceof ApiFailure ? found.code : [found.id, found.symbol, found.ticker]).toEqual([id, now, now.split(".")[0]])
              expect(s.namesOf(found as Instrument)).toEqual([...names].reverse())
              for (const former of names.slice(0, -1)) {
                const gone = s.resolve(former)
                expect(gone instanceof ApiFailure && gone.code === "NOT_FOUND" && gone.message.includes(now)).toBe(true)
                expect(s.listingOf(former)?.symbol).toBe(now)
                expect(s.currentSymbol(former)).toBe(now)
              }
            }
          }
          check(symbols)
          // A process started now loads the committed documents and answers the same.
          check(yield* Symbols.make)
          for (const [id, names] of history) {
            const listing = INSTRUMENTS.find((i) => i.id === id) as Instrument
            expect(yield* store.read((tx) => symbols.symbolIn(tx, listing))).toBe(names.at(-1))
          }
        })
        await Effect.runPromise(run.pipe(Effect.provide(Layer.provideMerge(Symbols.layer, MemoryStoreLayer))))
      }),
      { numRuns: 60 }
    )
  })
})
