/**
 * The catalogue's invariants (D-300): every exchange lists instruments, each listing is qualified with its exchange's
 * suffix and trades in its currency (which FX quotes), symbols are unique, the original eight keep their symbols and
 * base prices (price paths and scenario hashes depend on them), and the status mix the spec names is present.
 */
import { describe, expect, it } from "vitest"
import { EXCHANGES, findExchange } from "../../engine/domain/calendar.ts"
import { rateFor } from "../../engine/domain/fx.ts"
import { INSTRUMENTS, lookupSymbol, SYMBOL_FORMAT } from "../../engine/domain/instruments.ts"
import { companyFacts, currencyOf } from "../../engine/domain/reference/companies.ts"

describe("the instrument catalogue", () => {
  it("lists 4 to 10 instruments on every exchange, at least one ETF on the five largest", () => {
    for (const exchange of EXCHANGES) {
      const listed = INSTRUMENTS.filter((i) => i.exchange === exchange.code)
      expect(listed.length, exchange.code).toBeGreaterThanOrEqual(4)
      expect(listed.length, exchange.code).toBeLessThanOrEqual(10)
    }
    for (const code of ["NSE", "NGX", "JSE", "EGX", "CSE"]) {
      expect(
        INSTRUMENTS.some((i) => i.exchange === code && i.assetType === "ETF"),
        code
      ).toBe(true)
    }
  })

  it("qualifies each symbol with its exchange's suffix, and quotes it in the exchange's currency, which FX covers", () => {
    for (const i of INSTRUMENTS) {
      const exchange = findExchange(i.exchange)
      expect(exchange, i.symbol).toBeDefined()
      expect(i.symbol).toBe(`${i.ticker}.${exchange?.suffix}`)
      expect(SYMBOL_FORMAT.test(i.symbol), i.symbol).toBe(true)
      expect(currencyOf(i)).toBe(exchange?.currency)
      expect(companyFacts(1, i).currency).toBe(exchange?.currency)
      expect(rateFor(currencyOf(i)), i.symbol).toBeGreaterThan(0)
      expect(Number.isSafeInteger(i.basePrice) && i.basePrice > 0, i.symbol).toBe(true)
      expect(i.sector, i.symbol).not.toBeNull()
    }
    for (const exchange of EXCHANGES) expect(rateFor(exchange.currency), exchange.currency).toBeGreaterThan(0)
  })

  it("has unique symbols and names each listing once", () => {
    const symbols = INSTRUMENTS.map((i) => i.symbol)
    expect(new Set(symbols).size).toBe(symbols.length)
  })

  it("keeps the original eight listings, symbols and base prices, at the head of the catalogue", () => {
    expect(INSTRUMENTS.slice(0, 8).map((i) => [i.symbol, i.basePrice / 10_000, i.assetType, i.listingStatus])).toEqual([
      ["SCOM.KE", 18, "STOCK", "ACTIVE"],
      ["EQTY.KE", 46, "STOCK", "ACTIVE"],
      ["KCB.KE", 38, "STOCK", "ACTIVE"],
      ["EABL.KE", 160, "STOCK", "ACTIVE"],
      ["NPN.ZA", 3900, "STOCK", "ACTIVE"],
      ["SBK.ZA", 230, "STOCK", "ACTIVE"],
      ["MTN.ZA", 120, "STOCK", "ACTIVE"],
      ["STX40.ZA", 85, "ETF", "ACTIVE"]
    ])
  })

  it("holds SUSPENDED and DELISTED stocks, and keeps a decimal base price exact", () => {
    const status = (s: string) => INSTRUMENTS.filter((i) => i.listingStatus === s).map((i) => i.symbol)
    expect(status("SUSPENDED").length).toBeGreaterThanOrEqual(2)
    expect(status("DELISTED").length).toBeGreaterThanOrEqual(2)
    expect(INSTRUMENTS.find((i) => i.symbol === "LETSHEGO.BW")?.basePrice).toBe(10_500)
  })

  it("resolves a ticker listed on two exchanges only with the exchange or the qualified symbol", () => {
    expect(lookupSymbol("GLD")).toEqual({ _tag: "Ambiguous", candidates: ["GLD.KE", "GLD.ZA"] })
    expect(lookupSymbol("gld", "jse")).toMatchObject({ _tag: "Found", instrument: { symbol: "GLD.ZA" } })
    expect(lookupSymbol("GLD.KE")).toMatchObject({ _tag: "Found", instrument: { symbol: "GLD.KE", exchange: "NSE" } })
    expect(lookupSymbol("DANGCEM")).toMatchObject({ _tag: "Found", instrument: { symbol: "DANGCEM.NG" } })
  })
})
