/**
 * Tests of the exchange calendars (engine/domain/calendar.ts) and the symbol lookup (engine/domain/instruments.ts).
 * Everything the engine's answers are compared with is written here independently of its tables: fixed UTC offsets
 * and Date's UTC getters (no Intl), an Easter computed by the Anonymous Gregorian algorithm, Kenya's and South
 * Africa's holidays derived from their statutory rules (Sunday moves to Monday), and a hand-written table of one open
 * instant, one closed instant and one holiday per exchange.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import {
  EXCHANGES,
  type Exchange,
  findExchange,
  holidaysBetween,
  instantAt,
  isOpen,
  localIso,
  localParts,
  type MarketPhase,
  nextInstantAllOpen,
  nextPhaseChange,
  nextSessionAfter,
  phaseAt,
  SPEC_EXCHANGE_CODES,
  sessionOn
} from "../../engine/domain/calendar.ts"
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
// Independent reference: Easter, and the Kenyan and South African rules
// ---------------------------------------------------------------------------------------------------------------

/** Easter Sunday (Gregorian), Anonymous Gregorian algorithm (Meeus/Jones/Butcher). */
const easter = (year: number): number => {
  const a = year % 19
  const b = Math.floor(year / 100)
  const c = year % 100
  const d = Math.floor(b / 4)
  const e = b % 4
  const f = Math.floor((b + 8) / 25)
  const g = Math.floor((b - f + 1) / 3)
  const h = (19 * a + b - d - g + 15) % 30
  const i = Math.floor(c / 4)
  const k = c % 4
  const l = (32 + 2 * e + 2 * i - h - k) % 7
  const m = Math.floor((a + 11 * h + 22 * l) / 451)
  const month = Math.floor((h + l - 7 * m + 114) / 31)
  const day = ((h + l - 7 * m + 114) % 31) + 1
  return Date.UTC(year, month - 1, day)
}
const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10)
const YEARS = [2025, 2026, 2027]

/** Statutory dates (month-day) observed on the next Monday when they fall on a Sunday, plus Easter-relative days. */
const ruleHolidays = (fixed: ReadonlyArray<string>, easterOffsets: ReadonlyArray<number>, extra: ReadonlyArray<string>): Set<string> => {
  const out = new Set<string>(extra)
  for (const y of YEARS) {
    for (const md of fixed) {
      const t = Date.UTC(y, Number(md.slice(0, 2)) - 1, Number(md.slice(3, 5)))
      const weekday = new Date(t).getUTCDay()
      if (weekday === 0) out.add(isoDay(t + DAY))
      else if (weekday !== 6) out.add(isoDay(t))
    }
    for (const offset of easterOffsets) out.add(isoDay(easter(y) + offset * DAY))
  }
  return out
}

interface RefCalendar {
  readonly offsetHours: number
  readonly open: number
  readonly close: number
  readonly holidays: ReadonlySet<string>
  readonly earlyCloses: ReadonlyMap<string, number>
}
// Kenya: Public Holidays Act (Sunday -> Monday); Eid al-Fitr as gazetted (2025) and estimated (2026, 2027).
// South Africa: Public Holidays Act 36 of 1994 (Sunday -> Monday); JSE early closes at 12:00 on 24 and 31 December.
const REF: Record<"NSE" | "JSE", RefCalendar> = {
  NSE: {
    offsetHours: 3,
    open: 9 * 60,
    close: 15 * 60,
    holidays: ruleHolidays(["01-01", "05-01", "06-01", "10-10", "10-20", "12-12", "12-25", "12-26"], [-2, 1], ["2025-03-31", "2026-03-20", "2027-03-09"]),
    earlyCloses: new Map()
  },
  JSE: {
    offsetHours: 2,
    open: 9 * 60,
    close: 17 * 60,
    holidays: ruleHolidays(["01-01", "03-21", "04-27", "05-01", "06-16", "08-09", "09-24", "12-16", "12-25", "12-26"], [-2, 1], []),
    earlyCloses: new Map(YEARS.flatMap((y) => [`${y}-12-24`, `${y}-12-31`]).map((d) => [d, 12 * 60]))
  }
}

const refPhase = (code: "NSE" | "JSE", t: number): MarketPhase => {
  const c = REF[code]
  const local = new Date(t + c.offsetHours * HOUR)
  const day = local.getUTCDay() // 0 Sunday .. 6 Saturday
  if (day === 0 || day === 6) return "CLOSED"
  const date = local.toISOString().slice(0, 10)
  if (c.holidays.has(date)) return "HOLIDAY"
  const minutes = local.getUTCHours() * 60 + local.getUTCMinutes()
  return minutes >= c.open && minutes < (c.earlyCloses.get(date) ?? c.close) ? "OPEN" : "CLOSED"
}
const refBothOpen = (t: number) => refPhase("NSE", t) === "OPEN" && refPhase("JSE", t) === "OPEN"

// ---------------------------------------------------------------------------------------------------------------
// One open instant, one closed instant and one holiday per exchange (hand-written, UTC)
// ---------------------------------------------------------------------------------------------------------------

interface Known {
  readonly mic: string
  readonly timeZone: string
  readonly currency: string
  readonly suffix: string
  readonly open: string
  readonly closed: string
  readonly holiday: readonly [instant: string, name: string]
}
const KNOWN: Record<(typeof SPEC_EXCHANGE_CODES)[number], Known> = {
  // 11:00 EAT Tuesday; 15:30 EAT after the 15:00 close; Mashujaa Day
  NSE: {
    mic: "XNAI",
    timeZone: "Africa/Nairobi",
    currency: "KES",
    suffix: "KE",
    open: "2026-11-24T08:00:00Z",
    closed: "2026-11-24T12:30:00Z",
    holiday: ["2026-10-20T08:00:00Z", "Mashujaa Day"]
  },
  // 11:00 WAT; 14:30 WAT is the close itself (exclusive); Independence Day
  NGX: {
    mic: "XNSA",
    timeZone: "Africa/Lagos",
    currency: "NGN",
    suffix: "NG",
    open: "2026-11-24T10:00:00Z",
    closed: "2026-11-24T13:30:00Z",
    holiday: ["2026-10-01T10:00:00Z", "Independence Day"]
  },
  // 15:00 SAST; Saturday; Heritage Day
  JSE: {
    mic: "XJSE",
    timeZone: "Africa/Johannesburg",
    currency: "ZAR",
    suffix: "ZA",
    open: "2026-11-24T13:00:00Z",
    closed: "2026-11-28T10:00:00Z",
    holiday: ["2026-09-24T10:00:00Z", "Heritage Day"]
  },
  // 14:59 GMT; 15:00 GMT (close); Independence Day
  GSE: {
    mic: "XGHA",
    timeZone: "Africa/Accra",
    currency: "GHS",
    suffix: "GH",
    open: "2026-11-24T14:59:00Z",
    closed: "2026-11-24T15:00:00Z",
    holiday: ["2026-03-06T12:00:00Z", "Independence Day"]
  },
  // 09:00 GMT (open, inclusive); 08:59 GMT; Independence Day of Côte d'Ivoire
  BRVM: {
    mic: "XBRV",
    timeZone: "Africa/Abidjan",
    currency: "XOF",
    suffix: "CI",
    open: "2026-11-24T09:00:00Z",
    closed: "2026-11-24T08:59:00Z",
    holiday: ["2026-08-07T12:00:00Z", "Independence Day"]
  },
  // 11:00 CAT; Sunday; Unity Day
  ZSE: {
    mic: "XZIM",
    timeZone: "Africa/Harare",
    currency: "ZWG",
    suffix: "ZW",
    open: "2026-11-24T09:00:00Z",
    closed: "2026-11-22T09:00:00Z",
    holiday: ["2026-12-22T09:00:00Z", "Unity Day"]
  },
  // 12:00 CAT; 14:00 CAT (close); Botswana Day
  BSE: {
    mic: "XBOT",
    timeZone: "Africa/Gaborone",
    currency: "BWP",
    suffix: "BW",
    open: "2026-11-24T10:00:00Z",
    closed: "2026-11-24T12:00:00Z",
    holiday: ["2026-09-30T10:00:00Z", "Botswana Day"]
  },
  // 10:30 CAT; 13:00 CAT (close); Heroes' Day (first Monday of July)
  LUSE: {
    mic: "XLUS",
    timeZone: "Africa/Lusaka",
    currency: "ZMW",
    suffix: "ZM",
    open: "2026-11-24T08:30:00Z",
    closed: "2026-11-24T11:00:00Z",
    holiday: ["2026-07-06T09:00:00Z", "Heroes' Day"]
  },
  // Sunday 11:00 EET (EGX trades Sunday to Thursday); Friday; Armed Forces Day
  EGX: {
    mic: "XCAI",
    timeZone: "Africa/Cairo",
    currency: "EGP",
    suffix: "EG",
    open: "2026-11-22T09:00:00Z",
    closed: "2026-11-27T09:00:00Z",
    holiday: ["2026-10-06T09:00:00Z", "Armed Forces Day"]
  },
  // 15:00 EAT; 16:00 EAT (close); Independence Day of Tanganyika
  DSE: {
    mic: "XDAR",
    timeZone: "Africa/Dar_es_Salaam",
    currency: "TZS",
    suffix: "TZ",
    open: "2026-11-24T12:00:00Z",
    closed: "2026-11-24T13:00:00Z",
    holiday: ["2026-12-09T09:00:00Z", "Independence Day"]
  },
  // 10:00 EAT (open); 09:59 EAT; Martyrs' Day
  USE: {
    mic: "XUGA",
    timeZone: "Africa/Kampala",
    currency: "UGX",
    suffix: "UG",
    open: "2026-11-24T07:00:00Z",
    closed: "2026-11-24T06:59:00Z",
    holiday: ["2026-06-03T09:00:00Z", "Uganda Martyrs' Day"]
  },
  // 09:00 CAT (open); 15:00 CAT (close); Independence Day
  MSE: {
    mic: "XMSW",
    timeZone: "Africa/Blantyre",
    currency: "MWK",
    suffix: "MW",
    open: "2026-11-24T07:00:00Z",
    closed: "2026-11-24T13:00:00Z",
    holiday: ["2026-07-06T09:00:00Z", "Independence Day"]
  },
  // Tuesday 2026-06-23 11:00 (UTC+1); 15:30 (close); Independence Day (Casablanca is UTC+0 from 2026-09-20, tzdata 2026c)
  CSE: {
    mic: "XCAS",
    timeZone: "Africa/Casablanca",
    currency: "MAD",
    suffix: "MA",
    open: "2026-06-23T10:00:00Z",
    closed: "2026-06-23T14:30:00Z",
    holiday: ["2026-11-18T10:00:00Z", "Independence Day"]
  },
  // 13:00 MUT (UTC+4); 13:30 MUT (close); Arrival of Indentured Labourers
  SEM: {
    mic: "XMAU",
    timeZone: "Indian/Mauritius",
    currency: "MUR",
    suffix: "MU",
    open: "2026-11-24T09:00:00Z",
    closed: "2026-11-24T09:30:00Z",
    holiday: ["2026-11-02T07:00:00Z", "Arrival of Indentured Labourers"]
  }
}

describe("exchange table", () => {
  it("has the 14 exchanges of the spec, each with its MIC, zone, currency and suffix", () => {
    expect(EXCHANGES.map((e) => e.code)).toEqual([...SPEC_EXCHANGE_CODES])
    for (const code of SPEC_EXCHANGE_CODES) {
      const k = KNOWN[code]
      expect(exchange(code), code).toMatchObject({ mic: k.mic, timeZone: k.timeZone, currency: k.currency, suffix: k.suffix, country: k.suffix })
    }
    expect(NSE).toMatchObject({ opensAt: 540, closesAt: 900, settlementDays: 3 })
    expect(JSE).toMatchObject({ opensAt: 540, closesAt: 1020 })
    expect(findExchange("nse")).toBeUndefined()
    expect(findExchange("XYZ")).toBeUndefined()
  })

  it.each(SPEC_EXCHANGE_CODES)("%s: open, closed and holiday instants from the reference table", (code) => {
    const k = KNOWN[code]
    const e = exchange(code)
    expect(phaseAt(e, utc(k.open)), `${code} open at ${k.open}`).toBe("OPEN")
    expect(isOpen(e, utc(k.open))).toBe(true)
    expect(phaseAt(e, utc(k.closed)), `${code} closed at ${k.closed}`).toBe("CLOSED")
    expect(isOpen(e, utc(k.closed))).toBe(false)
    const [instant, name] = k.holiday
    expect(phaseAt(e, utc(instant)), `${code} holiday at ${instant}`).toBe("HOLIDAY")
    const date = localParts(utc(instant), k.timeZone).date
    expect(holidaysBetween(e, date, date)).toEqual([expect.objectContaining({ date, name })])
  })

  it("lists each closure once, in date order, on one of the exchange's trading days, within 2025-2027", () => {
    for (const e of EXCHANGES) {
      const dates = e.calendar.map((h) => h.date)
      expect([...dates].sort(), e.code).toEqual(dates)
      expect(new Set(dates).size, e.code).toBe(dates.length)
      for (const h of e.calendar) {
        const weekday = ((new Date(`${h.date}T00:00:00Z`).getUTCDay() + 6) % 7) + 1
        expect(e.tradingDays, `${e.code} ${h.date} ${h.name}`).toContain(weekday)
        expect(h.date >= "2025-01-01" && h.date <= "2027-12-31", h.date).toBe(true)
      }
      // every year has closures (a missing year would be a silent gap)
      for (const y of YEARS)
        expect(
          dates.some((d) => d.startsWith(String(y))),
          `${e.code} ${y}`
        ).toBe(true)
    }
  })

  it("closes on Good Friday and Easter Monday where they are public holidays (Easter computed independently)", () => {
    const both = ["NSE", "NGX", "JSE", "GSE", "ZSE", "BSE", "LUSE", "DSE", "USE", "MSE"]
    for (const y of YEARS) {
      const goodFriday = isoDay(easter(y) - 2 * DAY)
      const easterMonday = isoDay(easter(y) + DAY)
      for (const code of both) {
        expect(exchange(code).holidays, `${code} Good Friday ${y}`).toContain(goodFriday)
        expect(exchange(code).holidays, `${code} Easter Monday ${y}`).toContain(easterMonday)
      }
      expect(exchange("BRVM").holidays, `BRVM Easter Monday ${y}`).toContain(easterMonday)
      expect(exchange("BRVM").holidays, "BRVM Whit Monday").toContain(isoDay(easter(y) + 50 * DAY))
      expect(exchange("BRVM").holidays, "BRVM Ascension").toContain(isoDay(easter(y) + 39 * DAY))
      for (const code of ["EGX", "CSE", "SEM"]) expect(exchange(code).holidays, `${code} keeps Good Friday open`).not.toContain(goodFriday)
    }
  })

  it("closes on Christmas Day when it is a trading day, except in Egypt and Morocco", () => {
    for (const y of YEARS) {
      const xmas = `${y}-12-25`
      const weekday = new Date(`${xmas}T00:00:00Z`).getUTCDay()
      for (const e of EXCHANGES) {
        if (weekday === 0 || weekday === 6) continue
        if (e.code === "EGX" || e.code === "CSE") expect(e.holidays, e.code).not.toContain(xmas)
        else expect(e.holidays, `${e.code} ${xmas}`).toContain(xmas)
      }
    }
  })

  it("marks moon-sighting dates of 2026 and 2027 as estimates", () => {
    for (const e of EXCHANGES) {
      for (const h of e.calendar) {
        if (/Eid|Tabaski|Maulid|Maulud|Prophet|Islamic New Year|Arafat/.test(h.name) && h.date >= "2026-01-01")
          expect(h.estimated, `${e.code} ${h.date} ${h.name}`).toBe(true)
      }
    }
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

  it("observes a Sunday holiday on the Monday (Jamhuri Day 2027-12-12 -> 2027-12-13)", () => {
    expect(phaseAt(NSE, utc("2027-12-13T08:00:00Z"))).toBe("HOLIDAY")
    expect(holidaysBetween(NSE, "2027-12-13", "2027-12-13")[0]?.name).toBe("Jamhuri Day (observed)")
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

  it("closes early at 12:00 SAST on Christmas Eve", () => {
    expect(phaseAt(JSE, utc("2026-12-24T09:59:00Z"))).toBe("OPEN")
    expect(phaseAt(JSE, utc("2026-12-24T10:00:00Z"))).toBe("CLOSED")
    expect(sessionOn(JSE, "2026-12-24")).toEqual({
      date: "2026-12-24",
      opensAt: utc("2026-12-24T07:00:00Z"),
      closesAt: utc("2026-12-24T10:00:00Z"),
      earlyClose: true
    })
    expect(holidaysBetween(JSE, "2026-12-24", "2026-12-24")).toEqual([{ date: "2026-12-24", name: "Christmas Eve", closesAt: 720, estimated: true }])
  })

  it("property: phaseAt matches the rule-derived fixed-offset reference for NSE and JSE over 2025-2027", () => {
    fc.assert(
      fc.property(fc.integer({ min: utc("2025-01-01T00:00:00Z"), max: utc("2027-12-31T20:00:00Z") }), (t) => {
        expect(phaseAt(NSE, t)).toBe(refPhase("NSE", t))
        expect(phaseAt(JSE, t)).toBe(refPhase("JSE", t))
      }),
      { numRuns: RUNS * 3 }
    )
  })

  it("every rule-derived NSE and JSE holiday is HOLIDAY at local noon, and nothing else is", () => {
    for (const code of ["NSE", "JSE"] as const) {
      const e = exchange(code)
      expect(new Set(e.holidays)).toEqual(REF[code].holidays)
      for (const date of REF[code].holidays) expect(phaseAt(e, utc(`${date}T12:00:00Z`) - REF[code].offsetHours * HOUR), `${code} ${date}`).toBe("HOLIDAY")
    }
  })
})

describe("time zones with daylight saving or Ramadan time", () => {
  const EGX = exchange("EGX")
  const CSE = exchange("CSE")

  it("EGX follows Cairo summer time (UTC+3) and winter time (UTC+2), Sunday to Thursday", () => {
    // Sunday 2026-07-05: 10:00 EEST = 07:00Z; 14:30 EEST = 11:30Z
    expect(phaseAt(EGX, utc("2026-07-05T06:59:00Z"))).toBe("CLOSED")
    expect(phaseAt(EGX, utc("2026-07-05T07:00:00Z"))).toBe("OPEN")
    expect(phaseAt(EGX, utc("2026-07-05T11:45:00Z"))).toBe("CLOSED")
    // Sunday 2026-11-22: 10:00 EET = 08:00Z
    expect(phaseAt(EGX, utc("2026-11-22T07:59:00Z"))).toBe("CLOSED")
    expect(phaseAt(EGX, utc("2026-11-22T08:00:00Z"))).toBe("OPEN")
    expect(phaseAt(EGX, utc("2026-11-22T12:15:00Z"))).toBe("OPEN")
    // Friday and Saturday are the weekend
    expect(phaseAt(EGX, utc("2026-11-20T09:00:00Z"))).toBe("CLOSED")
    expect(phaseAt(EGX, utc("2026-11-21T09:00:00Z"))).toBe("CLOSED")
    expect(sessionOn(EGX, "2026-07-05")).toMatchObject({ opensAt: utc("2026-07-05T07:00:00Z"), closesAt: utc("2026-07-05T11:30:00Z") })
  })

  it("CSE follows the tz database for Casablanca: UTC+0 in Ramadan 2026, UTC+1 in June, UTC+0 from 2026-09-20", () => {
    // Tuesday 2026-03-03 (Ramadan): 15:00Z is 15:00 local, open; Tuesday 2026-06-23: 15:00Z is 16:00 local, closed
    expect(phaseAt(CSE, utc("2026-03-03T15:00:00Z"))).toBe("OPEN")
    expect(phaseAt(CSE, utc("2026-06-23T15:00:00Z"))).toBe("CLOSED")
    expect(phaseAt(CSE, utc("2026-06-23T08:30:00Z"))).toBe("OPEN")
    // Tuesday 2026-11-24 (tzdata 2026c: Morocco back on UTC+0): 15:00Z is 15:00 local, open
    expect(phaseAt(CSE, utc("2026-11-24T15:00:00Z"))).toBe("OPEN")
    expect(phaseAt(CSE, utc("2026-11-24T09:29:00Z"))).toBe("CLOSED")
  })

  it("instantAt and localIso turn local wall time into instants and back", () => {
    expect(instantAt("2026-01-05", 9 * 60, "Africa/Nairobi")).toBe(utc("2026-01-05T06:00:00Z"))
    expect(instantAt("2026-07-05", 0, "Africa/Cairo")).toBe(utc("2026-07-04T21:00:00Z"))
    expect(instantAt("2026-11-24", 13 * 60 + 30, "Indian/Mauritius")).toBe(utc("2026-11-24T09:30:00Z"))
    expect(localIso(utc("2026-01-05T09:30:00Z"), "Africa/Nairobi")).toBe("2026-01-05T12:30:00.000+03:00")
    expect(localIso(utc("2026-01-05T09:30:00Z"), "Africa/Abidjan")).toBe("2026-01-05T09:30:00.000+00:00")
    expect(localIso(utc("2026-07-05T21:30:00Z"), "Africa/Cairo")).toBe("2026-07-06T00:30:00.000+03:00")
  })

  it("property: instantAt inverts localParts for every exchange's zone", () => {
    fc.assert(
      fc.property(fc.constantFrom(...EXCHANGES), fc.integer({ min: utc("2025-01-01T00:00:00Z"), max: utc("2027-12-31T00:00:00Z") }), (e, t) => {
        const minute = Math.floor(t / MIN) * MIN
        const local = localParts(minute, e.timeZone)
        expect(instantAt(local.date, local.minutes, e.timeZone)).toBe(minute)
      }),
      { numRuns: RUNS }
    )
  })
})

describe("sessions and phase changes", () => {
  it("nextSessionAfter skips weekends and holidays", () => {
    // Thursday 2026-12-24 after the NSE close: Friday 25 holiday, weekend, Monday 28
    expect(nextSessionAfter(NSE, utc("2026-12-24T12:00:00Z"))).toMatchObject({ date: "2026-12-28", opensAt: utc("2026-12-28T06:00:00Z") })
    // while open, the next session is tomorrow's
    expect(nextSessionAfter(NSE, utc("2026-11-24T08:00:00Z"))).toMatchObject({ date: "2026-11-25" })
    // before the open, today's
    expect(nextSessionAfter(NSE, utc("2026-11-24T05:00:00Z"))).toMatchObject({ date: "2026-11-24" })
  })

  it("nextPhaseChange walks open, close and the midnights a closure starts and ends", () => {
    let t = utc("2026-12-24T08:00:00Z") // NSE open on Christmas Eve
    const seen: Array<[string, MarketPhase]> = []
    for (let i = 0; i < 4; i++) {
      const next = nextPhaseChange(NSE, t)
      if (next === undefined) throw new Error("no change")
      t = next
      seen.push([new Date(t).toISOString(), phaseAt(NSE, t)])
    }
    expect(seen).toEqual([
      ["2026-12-24T12:00:00.000Z", "CLOSED"],
      ["2026-12-24T21:00:00.000Z", "HOLIDAY"], // midnight of the 25th in Nairobi
      ["2026-12-25T21:00:00.000Z", "CLOSED"], // Saturday
      ["2026-12-28T06:00:00.000Z", "OPEN"]
    ])
  })

  it("property: nextPhaseChange is the first minute the phase differs (checked minute by minute)", () => {
    fc.assert(
      fc.property(fc.constantFrom(...EXCHANGES), fc.integer({ min: utc("2025-01-01T00:00:00Z"), max: utc("2027-12-20T00:00:00Z") }), (e, t) => {
        const next = nextPhaseChange(e, t)
        expect(next).toBeDefined()
        const change = next as number
        expect(change % MIN).toBe(0)
        const phase = phaseAt(e, t)
        expect(phaseAt(e, change)).not.toBe(phase)
        for (let u = Math.floor(t / MIN) * MIN + MIN; u < change; u += 15 * MIN) expect(phaseAt(e, u)).toBe(phase)
        expect(phaseAt(e, change - MIN)).toBe(phase)
      }),
      { numRuns: 60 }
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
      fc.property(fc.integer({ min: utc("2025-01-01T00:00:00Z"), max: utc("2027-12-20T00:00:00Z") }), (from) => {
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
        id: "SCOM.KE",
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
        // A ticker listed on two exchanges (GLD, D-300) needs the exchange or the qualified symbol.
        const listings = INSTRUMENTS.filter((j) => j.ticker === i.ticker).length
        expect(found(c(i.ticker))).toBe(listings === 1 ? i.symbol : "Ambiguous")
        expect(found(c(i.symbol))).toBe(i.symbol)
        expect(found(c(i.ticker), c(i.exchange))).toBe(i.symbol)
      }),
      { numRuns: 50 }
    )
  })
})
