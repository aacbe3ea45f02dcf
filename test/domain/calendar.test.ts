/**
 * Tests of the exchange calendars (engine/domain/calendar.ts) and the symbol lookup (engine/domain/instruments.ts).
 * The reference calendar below uses fixed UTC offsets (Nairobi +3, Johannesburg +2, neither observes DST) and
 * Date's UTC getters, so it shares nothing with the engine's Intl-based implementation.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import { EXCHANGES, type Exchange, findExchange, isOpen, localParts, type MarketPhase, nextInstantAllOpen, phaseAt } from "../../engine/domain/calendar.ts"
import { INSTRUMENTS, lookupSymbol } from "../../engine/domain/instruments.ts"

const RUNS = 300
const MIN = 60_000
const HOUR = 3_600_000
const DAY = 86_400_000
const utc = (iso: string): number => {
  const t = Date.parse(iso)
  if (Number.isNaN(t)) throw new Error(`bad date ${iso}`)
  return t
}

const exchange = (code: string): Exchange => {
  const e = findExchange(code)
  if (e === undefined) throw new Error(`no exchange ${code}`)
  return e
}
const NSE = exchange("NSE")
const JSE = exchange("JSE")

// ---------------------------------------------------------------------------------------------------------------
// Independent reference calendar
// ---------------------------------------------------------------------------------------------------------------

interface RefCalendar {
  readonly offsetHours: number
  readonly open: number
  readonly close: number
  readonly holidays: ReadonlyArray<string>
}
const REF: Record<"NSE" | "JSE", RefCalendar> = {
  NSE: { offsetHours: 3, open: 9 * 60, close: 15 * 60, holidays: ["2026-12-25", "2026-12-26", "2027-01-01"] },
  JSE: { offsetHours: 2, open: 9 * 60, close: 17 * 60, holidays: ["2026-12-16", "2026-12-25", "2026-12-26", "2027-01-01"] }
}

const refPhase = (code: "NSE" | "JSE", t: number): MarketPhase => {
  const c = REF[code]
  const local = new Date(t + c.offsetHours * HOUR)
  const day = local.getUTCDay() // 0 Sunday .. 6 Saturday
  if (day === 0 || day === 6) return "CLOSED"
  if (c.holidays.includes(local.toISOString().slice(0, 10))) return "HOLIDAY"
  const minutes = local.getUTCHours() * 60 + local.getUTCMinutes()
  return minutes >= c.open && minutes < c.close ? "OPEN" : "CLOSED"
}
const refBothOpen = (t: number) => refPhase("NSE", t) === "OPEN" && refPhase("JSE", t) === "OPEN"

// ---------------------------------------------------------------------------------------------------------------
// Exchanges and phases
// ---------------------------------------------------------------------------------------------------------------

describe("exchange table", () => {
  it("knows NSE and JSE with their zones and currencies", () => {
    expect(NSE).toMatchObject({ mic: "XNAI", timeZone: "Africa/Nairobi", currency: "KES", opensAt: 540, closesAt: 900 })
    expect(JSE).toMatchObject({ mic: "XJSE", timeZone: "Africa/Johannesburg", currency: "ZAR", opensAt: 540, closesAt: 1020 })
    expect(findExchange("NGX")).toBeUndefined()
    expect(findExchange("nse")).toBeUndefined()
    expect(EXCHANGES.map((e) => e.code)).toEqual(["NSE", "JSE"])
  })
})

describe("localParts", () => {
  it("gives the local date, ISO weekday and minute of day", () => {
    // Sunday 22:30Z = Monday 01:30 in Nairobi, Monday 00:30 in Johannesburg
    const t = utc("2026-11-22T22:30:00Z")
    expect(localParts(t, "Africa/Nairobi")).toEqual({ date: "2026-11-23", weekday: 1, minutes: 90 })
    expect(localParts(t, "Africa/Johannesburg")).toEqual({ date: "2026-11-23", weekday: 1, minutes: 30 })
    expect(localParts(t, "UTC")).toEqual({ date: "2026-11-22", weekday: 7, minutes: 22 * 60 + 30 })
    // midnight is minute 0 (h23 cycle, never 24:00)
    expect(localParts(utc("2026-11-22T21:00:00Z"), "Africa/Nairobi")).toEqual({ date: "2026-11-23", weekday: 1, minutes: 0 })
  })
})

describe("NSE phases (Africa/Nairobi, UTC+3, 09:00-15:00)", () => {
  it("is open on Monday 2026-11-23 at 08:00Z (11:00 local)", () => {
    const t = utc("2026-11-23T08:00:00Z")
    expect(phaseAt(NSE, t)).toBe("OPEN")
    expect(isOpen(NSE, t)).toBe(true)
  })

  it("opens at 09:00 local inclusive and closes at 15:00 local exclusive", () => {
    expect(phaseAt(NSE, utc("2026-11-23T05:59:59Z"))).toBe("CLOSED")
    expect(phaseAt(NSE, utc("2026-11-23T06:00:00Z"))).toBe("OPEN")
    expect(phaseAt(NSE, utc("2026-11-23T11:59:59Z"))).toBe("OPEN")
    expect(phaseAt(NSE, utc("2026-11-23T12:00:00Z"))).toBe("CLOSED")
    expect(isOpen(NSE, utc("2026-11-23T12:00:00Z"))).toBe(false)
  })

  it("is closed on Saturday and Sunday during trading hours", () => {
    expect(phaseAt(NSE, utc("2026-11-21T08:00:00Z"))).toBe("CLOSED")
    expect(phaseAt(NSE, utc("2026-11-22T08:00:00Z"))).toBe("CLOSED")
  })

  it("reports HOLIDAY on 2026-12-25 (a Friday), by local date", () => {
    expect(phaseAt(NSE, utc("2026-12-25T08:00:00Z"))).toBe("HOLIDAY")
    expect(isOpen(NSE, utc("2026-12-25T08:00:00Z"))).toBe(false)
    // 22:00Z on the 24th is already 01:00 on the 25th in Nairobi
    expect(phaseAt(NSE, utc("2026-12-24T22:00:00Z"))).toBe("HOLIDAY")
    expect(phaseAt(NSE, utc("2026-12-24T20:59:00Z"))).toBe("CLOSED")
    expect(phaseAt(NSE, utc("2026-12-24T08:00:00Z"))).toBe("OPEN")
    // the 26th is a Saturday: weekend, not holiday
    expect(phaseAt(NSE, utc("2026-12-26T08:00:00Z"))).toBe("CLOSED")
    expect(phaseAt(NSE, utc("2027-01-01T08:00:00Z"))).toBe("HOLIDAY")
  })
})

describe("JSE phases (Africa/Johannesburg, UTC+2, 09:00-17:00)", () => {
  it("follows Johannesburg wall time", () => {
    expect(phaseAt(JSE, utc("2026-11-23T06:59:00Z"))).toBe("CLOSED") // 08:59 SAST
    expect(phaseAt(JSE, utc("2026-11-23T07:00:00Z"))).toBe("OPEN") // 09:00 SAST
    expect(phaseAt(JSE, utc("2026-11-23T14:59:00Z"))).toBe("OPEN") // 16:59 SAST
    expect(phaseAt(JSE, utc("2026-11-23T15:00:00Z"))).toBe("CLOSED") // 17:00 SAST
  })

  it("is open when NSE is already closed, and vice versa", () => {
    const t = utc("2026-11-23T13:00:00Z") // 16:00 Nairobi, 15:00 Johannesburg
    expect(phaseAt(NSE, t)).toBe("CLOSED")
    expect(phaseAt(JSE, t)).toBe("OPEN")
    const u = utc("2026-11-23T06:30:00Z") // 09:30 Nairobi, 08:30 Johannesburg
    expect(phaseAt(NSE, u)).toBe("OPEN")
    expect(phaseAt(JSE, u)).toBe("CLOSED")
  })

  it("has its own holidays (2026-12-16 Day of Reconciliation, a Wednesday)", () => {
    const t = utc("2026-12-16T10:00:00Z")
    expect(phaseAt(JSE, t)).toBe("HOLIDAY")
    expect(phaseAt(NSE, t)).toBe("OPEN")
  })

  it("property: phaseAt matches the fixed-offset reference for both exchanges", () => {
    fc.assert(
      fc.property(fc.integer({ min: utc("2026-01-01T00:00:00Z"), max: utc("2027-12-31T00:00:00Z") }), (t) => {
        expect(phaseAt(NSE, t)).toBe(refPhase("NSE", t))
        expect(phaseAt(JSE, t)).toBe(refPhase("JSE", t))
      }),
      { numRuns: RUNS }
    )
  })
})

// ---------------------------------------------------------------------------------------------------------------
// nextInstantAllOpen
// ---------------------------------------------------------------------------------------------------------------

describe("nextInstantAllOpen", () => {
  it("from a Saturday returns Monday 07:00Z, when both NSE and JSE are open", () => {
    expect(nextInstantAllOpen(utc("2026-11-21T10:07:00Z"))).toBe(utc("2026-11-23T07:00:00Z"))
    expect(nextInstantAllOpen(utc("2026-11-21T00:00:00Z"))).toBe(utc("2026-11-23T07:00:00Z"))
  })

  it("returns `from` itself when both are already open", () => {
    const t = utc("2026-11-23T09:07:13Z")
    expect(nextInstantAllOpen(t)).toBe(t)
  })

  it("rounds up to the 15-minute grid", () => {
    expect(nextInstantAllOpen(utc("2026-11-23T06:53:00Z"))).toBe(utc("2026-11-23T07:00:00Z"))
    // after NSE closes at 12:00Z, the next common window is Tuesday 07:00Z
    expect(nextInstantAllOpen(utc("2026-11-23T12:00:00Z"))).toBe(utc("2026-11-24T07:00:00Z"))
  })

  it("steps on a 15-minute grid, not a coarser one", () => {
    // NSE-like calendars opening at 09:15 and 09:45 local (06:15Z, 06:45Z)
    const quarter: Exchange = { ...NSE, code: "GSE", opensAt: 9 * 60 + 15 }
    expect(nextInstantAllOpen(utc("2026-11-23T05:01:00Z"), [quarter])).toBe(utc("2026-11-23T06:15:00Z"))
    const threeQuarter: Exchange = { ...NSE, code: "ZSE", opensAt: 9 * 60 + 45 }
    expect(nextInstantAllOpen(utc("2026-11-23T06:31:00Z"), [threeQuarter])).toBe(utc("2026-11-23T06:45:00Z"))
    // opening at 09:05 local: the first grid instant inside the session is 09:15 local (06:15Z), not 09:05
    const offGrid: Exchange = { ...NSE, code: "BSE", opensAt: 9 * 60 + 5 }
    expect(nextInstantAllOpen(utc("2026-11-23T05:01:00Z"), [offGrid])).toBe(utc("2026-11-23T06:15:00Z"))
  })

  it("skips holidays of either exchange", () => {
    // Thursday 24 Dec after close -> 25 holiday, 26-27 weekend -> Monday 28 Dec 07:00Z
    expect(nextInstantAllOpen(utc("2026-12-24T12:00:00Z"))).toBe(utc("2026-12-28T07:00:00Z"))
    // Tuesday 15 Dec after close -> 16 JSE holiday -> Thursday 17 Dec 07:00Z
    expect(nextInstantAllOpen(utc("2026-12-15T12:00:00Z"))).toBe(utc("2026-12-17T07:00:00Z"))
  })

  it("works with a single exchange and returns undefined when nothing opens within the week", () => {
    expect(nextInstantAllOpen(utc("2026-11-23T13:00:00Z"), [NSE])).toBe(utc("2026-11-24T06:00:00Z"))
    const never: Exchange = { ...NSE, code: "SEM", opensAt: 600, closesAt: 600 }
    expect(nextInstantAllOpen(utc("2026-11-23T08:00:00Z"), [never])).toBeUndefined()
  })

  it("property: the first instant (at or after `from`, on the grid) when the reference says both are open", () => {
    const step = 15 * MIN
    fc.assert(
      fc.property(fc.integer({ min: utc("2026-01-01T00:00:00Z"), max: utc("2027-12-20T00:00:00Z") }), (from) => {
        const r = nextInstantAllOpen(from)
        let expected: number | undefined
        if (refBothOpen(from)) expected = from
        else {
          for (let t = Math.ceil(from / step) * step; t < from + 8 * DAY; t += step) {
            if (refBothOpen(t)) {
              expected = t
              break
            }
          }
        }
        expect(r).toBe(expected)
        if (r !== undefined && r !== from) expect(r % step).toBe(0)
      }),
      { numRuns: 200 }
    )
  })
})

// ---------------------------------------------------------------------------------------------------------------
// lookupSymbol
// ---------------------------------------------------------------------------------------------------------------

describe("lookupSymbol", () => {
  const found = (raw: string, exchangeCode?: string): string => {
    const r = exchangeCode === undefined ? lookupSymbol(raw) : lookupSymbol(raw, exchangeCode)
    return r._tag === "Found" ? r.instrument.symbol : r._tag
  }

  it("resolves SCOM, SCOM.KE and SCOM with exchange NSE, not the older SCOM.NSE", () => {
    expect(found("SCOM")).toBe("SCOM.KE")
    expect(found("SCOM.KE")).toBe("SCOM.KE")
    expect(found("scom.ke")).toBe("SCOM.KE")
    expect(found("SCOM.NSE")).toBe("NotFound") // the older ticker.EXCHANGE form is not a symbol (D-080 revised)
    expect(found("SCOM", "NSE")).toBe("SCOM.KE")
    expect(found("scom", "nse")).toBe("SCOM.KE")
    const r = lookupSymbol("SCOM")
    expect(r).toEqual({
      _tag: "Found",
      instrument: {
        symbol: "SCOM.KE",
        ticker: "SCOM",
        exchange: "NSE",
        name: "Safaricom PLC",
        sector: "Telecommunications",
        assetType: "STOCK",
        listingStatus: "ACTIVE",
        basePrice: 180_000
      }
    })
  })

  it("resolves JSE instruments", () => {
    expect(found("NPN")).toBe("NPN.ZA")
    expect(found("stx40.za")).toBe("STX40.ZA")
    const r = lookupSymbol("STX40")
    expect(r._tag === "Found" && r.instrument.assetType).toBe("ETF")
  })

  it("rejects malformed symbols with InvalidFormat", () => {
    for (const raw of ["A", "", "SC OM", "SCOM.", ".SCOM", "SCOM..NSE", "SCOM-NSE", "ABCDEFGHIJKLMNOPQRSTU", "É1"]) {
      expect(lookupSymbol(raw)._tag, JSON.stringify(raw)).toBe("InvalidFormat")
    }
    expect(lookupSymbol("A", "NSE")._tag).toBe("InvalidFormat")
  })

  it("accepts the format boundaries (2 and 20 characters)", () => {
    expect(lookupSymbol("AB")._tag).toBe("NotFound")
    expect(lookupSymbol("ABCDEFGHIJKLMNOPQRST")._tag).toBe("NotFound")
  })

  it("returns NotFound for unknown symbols and exchange mismatches", () => {
    expect(found("ZZZZ")).toBe("NotFound")
    expect(found("SCOM.JSE")).toBe("NotFound")
    expect(found("SCOM", "JSE")).toBe("NotFound")
    expect(found("SCOM.NSE", "JSE")).toBe("NotFound")
    expect(found("NSE")).toBe("NotFound")
  })

  it("property: every catalogue instrument resolves by symbol, ticker and ticker+exchange, in any case", () => {
    fc.assert(
      fc.property(fc.constantFrom(...INSTRUMENTS), fc.boolean(), (i, lower) => {
        const c = (s: string) => (lower ? s.toLowerCase() : s)
        expect(found(c(`${i.ticker}.${i.exchange}`))).toBe("NotFound")
        expect(found(c(i.ticker))).toBe(i.symbol)
        expect(found(c(i.ticker), c(i.exchange))).toBe(i.symbol)
      }),
      { numRuns: 50 }
    )
  })
})
