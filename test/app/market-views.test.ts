/**
 * The pure parts of the market-data views (app/market-views.ts): reading a `symbols=` list, the exchange filter and
 * the movers' ranking. What a partner reads in each refusal (code, message, fields) is asserted here, because the
 * message is the only place that names which symbols were wrong.
 */
import { describe, expect, it } from "vitest"
import { exchangeFilter, MAX_SYMBOLS, rankMovers, resolveSymbols } from "../../engine/app/market-views.ts"
import { ApiFailure } from "../../engine/domain/errors.ts"
import { lookupSymbol } from "../../engine/domain/instruments.ts"

const failure = (value: unknown): ApiFailure => {
  expect(value).toBeInstanceOf(ApiFailure)
  return value as ApiFailure
}
const symbolsOf = (value: unknown) => {
  expect(value).not.toBeInstanceOf(ApiFailure)
  return (value as { found: ReadonlyArray<{ symbol: string }> }).found.map((i) => i.symbol)
}

describe("resolveSymbols", () => {
  it("trims each symbol and skips empty entries of the list", () => {
    expect(symbolsOf(resolveSymbols(lookupSymbol, " SCOM.KE ,, NPN.ZA,", undefined))).toEqual(["SCOM.KE", "NPN.ZA"])
  })

  it("refuses an empty list as MISSING_PARAM on symbols", () => {
    const f = failure(resolveSymbols(lookupSymbol, " , ", undefined))
    expect([f.code, f.extras]).toEqual(["MISSING_PARAM", { param: "symbols" }])
    expect(f.message).toMatch(/at least one symbol/)
  })

  it("refuses more than 50 symbols, saying how many it got", () => {
    const many = Array.from({ length: MAX_SYMBOLS + 2 }, (_, i) => `S${String(i).padStart(3, "0")}`).join(",")
    const f = failure(resolveSymbols(lookupSymbol, many, undefined))
    expect([f.code, f.extras]).toEqual(["BATCH_LIMIT_EXCEEDED", { param: "symbols", max: 50, received: 52 }])
    expect(f.message).toBe("at most 50 symbols per call, got 52")
  })

  it("refuses malformed symbols together, naming each in the message and in `invalid`", () => {
    const f = failure(resolveSymbols(lookupSymbol, "SCOM,bad!sym,X", undefined))
    expect([f.code, f.extras]).toEqual(["INVALID_SYMBOL", { param: "symbols", invalid: ["bad!sym", "X"] }])
    expect(f.message).toMatch(/^malformed symbols: bad!sym, X \(/)
  })

  it("refuses a bare ticker listed on several exchanges, naming the listings; the exchange settles it", () => {
    const f = failure(resolveSymbols(lookupSymbol, "SCOM,GLD", undefined))
    expect([f.code, f.extras]).toEqual(["VALIDATION_ERROR", { param: "symbols" }])
    expect(f.message).toMatch(/^symbol GLD matches several listings \(GLD\.KE, GLD\.ZA\)/)
    expect(symbolsOf(resolveSymbols(lookupSymbol, "GLD", "JSE"))).toEqual(["GLD.ZA"])
  })
})

describe("exchangeFilter", () => {
  it("takes an exchange code in any case and refuses an unknown one, naming it", () => {
    expect(exchangeFilter(undefined)).toBeUndefined()
    expect(exchangeFilter("jse")).toBe("JSE")
    const f = failure(exchangeFilter("XXX"))
    expect([f.code, f.extras, f.message]).toEqual(["UNKNOWN_EXCHANGE", { param: "exchange" }, "exchange XXX is not recognised"])
  })
})

describe("rankMovers", () => {
  /** Every rotation of `items`: a ranking must not depend on the order the items came in. */
  const rotations = <T>(items: ReadonlyArray<T>) => items.map((_, i) => [...items.slice(i), ...items.slice(0, i)])

  it("ranks equal changes by volume, a missing volume counting as none, whatever the input order", () => {
    const items = [
      { symbol: "LOW", changePct: 0.02, volume: 1 },
      { symbol: "NONE", changePct: 0.02, volume: null },
      { symbol: "HIGH", changePct: 0.02, volume: 9 }
    ]
    for (const order of [...rotations(items), ...rotations(items.toReversed())]) {
      expect(rankMovers(order, "gainers", 10).map((i) => i.symbol)).toEqual(["HIGH", "LOW", "NONE"])
    }
  })

  it("ranks equal changes and volumes by symbol, whatever the input order, across a long list", () => {
    // 70 items: long enough that the sort merges runs, comparing items in both orders
    const symbols = Array.from({ length: 70 }, (_, i) => `S${String((i * 37) % 70).padStart(2, "0")}`)
    const items = symbols.map((symbol) => ({ symbol, changePct: -0.01, volume: 5 }))
    const sorted = symbols.toSorted()
    for (const order of [items, items.toReversed()]) expect(rankMovers(order, "losers", 70).map((i) => i.symbol)).toEqual(sorted)
  })
})
