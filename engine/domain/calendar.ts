/**
 * Exchange calendars: the 14 exchanges the spec names, with their MIC, IANA time zone, currency, symbol suffix,
 * regular session (local wall time), trading days, settlement cycle and the closures and early closes of 2025-2027;
 * and the questions asked of them: the phase at an instant, today's session, the next open and close, the next phase
 * change, the holidays in a window. Pure: every instant is an argument; nothing here reads a clock.
 * Does not own prices (sim/market-feed.ts), instruments (domain/instruments.ts) nor who hears of phase changes
 * (app/market-calendar.ts). Sources of every date, and which ones are estimates: docs/calendars.md.
 */

/** A day an exchange is closed although it is one of its trading days, or closes early (`closesAt`). */
export interface HolidayEntry {
  /** Local calendar date, ISO `YYYY-MM-DD`. */
  readonly date: string
  readonly name: string
  /** Early close: local minutes after midnight the session ends; absent for a full closure. */
  readonly closesAt?: number
  /** True when the date is our estimate (moon sighting, a decree not yet published); docs/calendars.md. */
  readonly estimated: boolean
}

export interface Exchange {
  readonly code: ExchangeCode
  readonly name: string
  readonly mic: string
  readonly timeZone: string
  readonly currency: string
  /** Country suffix of its symbols (`SCOM.KE`), as the service writes them (decision D-080, facts 9.1.1). */
  readonly suffix: string
  /** ISO 3166-1 alpha-2 country of the exchange (equal to the suffix, D-080). */
  readonly country: string
  /** Continuous session, local wall time, minutes after midnight. */
  readonly opensAt: number
  readonly closesAt: number
  /** ISO weekdays (1 Monday .. 7 Sunday) with a session. */
  readonly tradingDays: ReadonlyArray<number>
  /** Business days from trade to settlement (T+n). */
  readonly settlementDays: number
  /** ISO dates (local) when the exchange is closed although it is a trading day. */
  readonly holidays: ReadonlyArray<string>
  /** Closures and early closes with their names, by date (the source of `holidays`). */
  readonly calendar: ReadonlyArray<HolidayEntry>
}

const hm = (h: number, m = 0) => h * 60 + m

/** A full closure. */
const off = (date: string, name: string): HolidayEntry => ({ date, name, estimated: false })
/** A full closure whose date is an estimate. */
const est = (date: string, name: string): HolidayEntry => ({ date, name, estimated: true })
/** An early close at local `closesAt` minutes. */
const early = (date: string, name: string, closesAt: number, estimated: boolean): HolidayEntry => ({ date, name, closesAt, estimated })

const MON_FRI = [1, 2, 3, 4, 5] as const
const SUN_THU = [7, 1, 2, 3, 4] as const

interface ExchangeSpec extends Omit<Exchange, "holidays" | "country" | "tradingDays"> {
  readonly tradingDays?: ReadonlyArray<number>
}

const exchange = (spec: ExchangeSpec): Exchange => {
  const calendar = [...spec.calendar].sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0))
  return {
    ...spec,
    country: spec.suffix,
    tradingDays: spec.tradingDays ?? MON_FRI,
    calendar,
    holidays: calendar.filter((h) => h.closesAt === undefined).map((h) => h.date)
  }
}

// Easter Sunday: 2025-04-20, 2026-04-05, 2027-03-28 (Western); Orthodox 2025-04-20, 2026-04-12, 2027-05-02.
// Islamic dates for 2026 and 2027 are estimates (Eid al-Fitr 2026-03-20 and 2027-03-09, Eid al-Adha 2026-05-27 and
// 2027-05-16, Islamic New Year 2026-06-16 and 2027-06-06, the Prophet's Birthday 2026-08-25 and 2027-08-15): each
// country announces them after the moon sighting. Only closures on a trading day are listed (a holiday on a weekend
// closes nothing unless the country moves it to a weekday, and then the weekday is listed as "observed").

const GF = "Good Friday"
const EM = "Easter Monday"
const NY = "New Year's Day"
const XMAS = "Christmas Day"
const BOXING = "Boxing Day"
const LABOUR = "Labour Day"
const FITR = "Eid al-Fitr"
const ADHA = "Eid al-Adha"

export const EXCHANGES: ReadonlyArray<Exchange> = [
  exchange({
    code: "NSE",
    name: "Nairobi Securities Exchange",
    mic: "XNAI",
    timeZone: "Africa/Nairobi",
    currency: "KES",
    suffix: "KE",
    opensAt: hm(9),
    closesAt: hm(15),
    settlementDays: 3,
    calendar: [
      off("2025-01-01", NY),
      off("2025-03-31", FITR),
      off("2025-04-18", GF),
      off("2025-04-21", EM),
      off("2025-05-01", LABOUR),
      off("2025-06-02", "Madaraka Day (observed)"),
      off("2025-10-10", "Mazingira Day"),
      off("2025-10-20", "Mashujaa Day"),
      off("2025-12-12", "Jamhuri Day"),
      off("2025-12-25", XMAS),
      off("2025-12-26", BOXING),
      off("2026-01-01", NY),
      est("2026-03-20", FITR),
      off("2026-04-03", GF),
      off("2026-04-06", EM),
      off("2026-05-01", LABOUR),
      off("2026-06-01", "Madaraka Day"),
      off("2026-10-20", "Mashujaa Day"),
      off("2026-12-25", XMAS),
      off("2027-01-01", NY),
      est("2027-03-09", FITR),
      off("2027-03-26", GF),
      off("2027-03-29", EM),
      off("2027-06-01", "Madaraka Day"),
      off("2027-10-11", "Mazingira Day (observed)"),
      off("2027-10-20", "Mashujaa Day"),
      off("2027-12-13", "Jamhuri Day (observed)"),
      off("2027-12-27", "Boxing Day (observed)")
    ]
  }),
  exchange({
    code: "NGX",
    name: "Nigerian Exchange",
    mic: "XNSA",
    timeZone: "Africa/Lagos",
    currency: "NGN",
    suffix: "NG",
    opensAt: hm(10),
    closesAt: hm(14, 30),
    settlementDays: 2,
    calendar: [
      off("2025-01-01", NY),
      off("2025-03-31", FITR),
      off("2025-04-01", `${FITR} holiday`),
      off("2025-04-18", GF),
      off("2025-04-21", EM),
      off("2025-05-01", "Workers' Day"),
      off("2025-06-06", ADHA),
      off("2025-06-09", `${ADHA} holiday`),
      off("2025-06-12", "Democracy Day"),
      off("2025-09-05", "Id el Maulud"),
      off("2025-10-01", "Independence Day"),
      off("2025-12-25", XMAS),
      off("2025-12-26", BOXING),
      off("2026-01-01", NY),
      est("2026-03-20", FITR),
      est("2026-03-23", `${FITR} holiday`),
      off("2026-04-03", GF),
      off("2026-04-06", EM),
      off("2026-05-01", "Workers' Day"),
      est("2026-05-27", ADHA),
      est("2026-05-28", `${ADHA} holiday`),
      off("2026-06-12", "Democracy Day"),
      est("2026-08-25", "Id el Maulud"),
      off("2026-10-01", "Independence Day"),
      off("2026-12-25", XMAS),
      est("2026-12-28", "Boxing Day (observed)"),
      off("2027-01-01", NY),
      est("2027-03-09", FITR),
      est("2027-03-10", `${FITR} holiday`),
      off("2027-03-26", GF),
      off("2027-03-29", EM),
      est("2027-05-03", "Workers' Day (observed)"),
      est("2027-05-17", `${ADHA} (observed)`),
      est("2027-05-18", `${ADHA} holiday`),
      est("2027-06-14", "Democracy Day (observed)"),
      est("2027-08-16", "Id el Maulud (observed)"),
      off("2027-10-01", "Independence Day"),
      est("2027-12-27", "Christmas Day (observed)"),
      est("2027-12-28", "Boxing Day (observed)")
    ]
  }),
  exchange({
    code: "JSE",
    name: "Johannesburg Stock Exchange",
    mic: "XJSE",
    timeZone: "Africa/Johannesburg",
    currency: "ZAR",
    suffix: "ZA",
    opensAt: hm(9),
    closesAt: hm(17),
    settlementDays: 3,
    calendar: [
      off("2025-01-01", NY),
      off("2025-03-21", "Human Rights Day"),
      off("2025-04-18", GF),
      off("2025-04-21", "Family Day"),
      off("2025-04-28", "Freedom Day (observed)"),
      off("2025-05-01", "Workers' Day"),
      off("2025-06-16", "Youth Day"),
      off("2025-09-24", "Heritage Day"),
      off("2025-12-16", "Day of Reconciliation"),
      early("2025-12-24", "Christmas Eve", hm(12), true),
      off("2025-12-25", XMAS),
      off("2025-12-26", "Day of Goodwill"),
      early("2025-12-31", "New Year's Eve", hm(12), true),
      off("2026-01-01", NY),
      off("2026-04-03", GF),
      off("2026-04-06", "Family Day"),
      off("2026-04-27", "Freedom Day"),
      off("2026-05-01", "Workers' Day"),
      off("2026-06-16", "Youth Day"),
      off("2026-08-10", "National Women's Day (observed)"),
      off("2026-09-24", "Heritage Day"),
      off("2026-12-16", "Day of Reconciliation"),
      early("2026-12-24", "Christmas Eve", hm(12), true),
      off("2026-12-25", XMAS),
      early("2026-12-31", "New Year's Eve", hm(12), true),
      off("2027-01-01", NY),
      off("2027-03-22", "Human Rights Day (observed)"),
      off("2027-03-26", GF),
      off("2027-03-29", "Family Day"),
      off("2027-04-27", "Freedom Day"),
      off("2027-06-16", "Youth Day"),
      off("2027-08-09", "National Women's Day"),
      off("2027-09-24", "Heritage Day"),
      off("2027-12-16", "Day of Reconciliation"),
      early("2027-12-24", "Christmas Eve", hm(12), true),
      off("2027-12-27", "Day of Goodwill (observed)"),
      early("2027-12-31", "New Year's Eve", hm(12), true)
    ]
  }),
  exchange({
    code: "GSE",
    name: "Ghana Stock Exchange",
    mic: "XGHA",
    timeZone: "Africa/Accra",
    currency: "GHS",
    suffix: "GH",
    opensAt: hm(10),
    closesAt: hm(15),
    settlementDays: 3,
    calendar: [
      off("2025-01-01", NY),
      off("2025-01-07", "Constitution Day"),
      off("2025-03-06", "Independence Day"),
      off("2025-03-31", FITR),
      off("2025-04-18", GF),
      off("2025-04-21", EM),
      off("2025-05-01", "May Day"),
      off("2025-06-06", ADHA),
      off("2025-07-01", "National Day of Prayer and Thanksgiving"),
      off("2025-08-04", "Founders' Day"),
      off("2025-09-22", "Kwame Nkrumah Memorial Day (observed)"),
      off("2025-12-05", "Farmers' Day"),
      off("2025-12-25", XMAS),
      off("2025-12-26", BOXING),
      off("2026-01-01", NY),
      off("2026-01-07", "Constitution Day"),
      off("2026-03-06", "Independence Day"),
      est("2026-03-20", FITR),
      off("2026-04-03", GF),
      off("2026-04-06", EM),
      off("2026-05-01", "May Day"),
      est("2026-05-27", ADHA),
      off("2026-07-01", "National Day of Prayer and Thanksgiving"),
      off("2026-08-04", "Founders' Day"),
      off("2026-09-21", "Kwame Nkrumah Memorial Day"),
      off("2026-12-04", "Farmers' Day"),
      off("2026-12-25", XMAS),
      off("2026-12-28", "Boxing Day (observed)"),
      off("2027-01-01", NY),
      off("2027-01-07", "Constitution Day"),
      off("2027-03-08", "Independence Day (observed)"),
      est("2027-03-09", FITR),
      off("2027-03-26", GF),
      off("2027-03-29", EM),
      off("2027-05-03", "May Day (observed)"),
      est("2027-05-17", `${ADHA} (observed)`),
      off("2027-07-01", "National Day of Prayer and Thanksgiving"),
      off("2027-08-04", "Founders' Day"),
      off("2027-09-21", "Kwame Nkrumah Memorial Day"),
      off("2027-12-03", "Farmers' Day"),
      off("2027-12-27", "Christmas Day (observed)"),
      off("2027-12-28", "Boxing Day (observed)")
    ]
  }),
  exchange({
    code: "BRVM",
    name: "Bourse Régionale des Valeurs Mobilières",
    mic: "XBRV",
    timeZone: "Africa/Abidjan",
    currency: "XOF",
    suffix: "CI",
    opensAt: hm(9),
    closesAt: hm(15, 30),
    settlementDays: 3,
    calendar: [
      off("2025-01-01", NY),
      est("2025-03-27", "Day after Laylat al-Qadr"),
      off("2025-03-31", FITR),
      off("2025-04-21", EM),
      off("2025-05-01", LABOUR),
      off("2025-05-29", "Ascension Day"),
      off("2025-06-06", "Tabaski (Eid al-Adha)"),
      off("2025-06-09", "Whit Monday"),
      off("2025-08-07", "Independence Day"),
      off("2025-08-15", "Assumption Day"),
      est("2025-09-05", "Day after the Prophet's Birthday"),
      off("2025-12-25", XMAS),
      off("2026-01-01", NY),
      est("2026-03-16", "Day after Laylat al-Qadr"),
      est("2026-03-20", FITR),
      off("2026-04-06", EM),
      off("2026-05-01", LABOUR),
      off("2026-05-14", "Ascension Day"),
      off("2026-05-25", "Whit Monday"),
      est("2026-05-27", "Tabaski (Eid al-Adha)"),
      off("2026-08-07", "Independence Day"),
      est("2026-08-26", "Day after the Prophet's Birthday"),
      off("2026-12-25", XMAS),
      off("2027-01-01", NY),
      est("2027-03-09", FITR),
      off("2027-03-29", EM),
      off("2027-05-06", "Ascension Day"),
      off("2027-05-17", "Whit Monday"),
      est("2027-08-16", "Day after the Prophet's Birthday"),
      off("2027-11-01", "All Saints' Day"),
      off("2027-11-15", "National Peace Day")
    ]
  }),
  exchange({
    code: "ZSE",
    name: "Zimbabwe Stock Exchange",
    mic: "XZIM",
    timeZone: "Africa/Harare",
    currency: "ZWG",
    suffix: "ZW",
    opensAt: hm(10),
    closesAt: hm(14),
    settlementDays: 3,
    calendar: [
      off("2025-01-01", NY),
      off("2025-02-21", "Robert Gabriel Mugabe National Youth Day"),
      off("2025-04-18", "Good Friday and Independence Day"),
      off("2025-04-21", EM),
      off("2025-05-01", "Workers' Day"),
      off("2025-05-26", "Africa Day (observed)"),
      off("2025-08-11", "Heroes' Day"),
      off("2025-08-12", "Defence Forces Day"),
      off("2025-12-22", "Unity Day"),
      off("2025-12-25", XMAS),
      off("2025-12-26", BOXING),
      off("2026-01-01", NY),
      off("2026-04-03", GF),
      off("2026-04-06", EM),
      off("2026-05-01", "Workers' Day"),
      off("2026-05-25", "Africa Day"),
      off("2026-08-10", "Heroes' Day"),
      off("2026-08-11", "Defence Forces Day"),
      off("2026-12-22", "Unity Day"),
      off("2026-12-25", XMAS),
      off("2027-01-01", NY),
      off("2027-02-22", "Robert Gabriel Mugabe National Youth Day (observed)"),
      off("2027-03-26", GF),
      off("2027-03-29", EM),
      off("2027-04-19", "Independence Day (observed)"),
      off("2027-05-25", "Africa Day"),
      off("2027-08-09", "Heroes' Day"),
      off("2027-08-10", "Defence Forces Day"),
      off("2027-12-22", "Unity Day"),
      off("2027-12-27", "Boxing Day (observed)")
    ]
  }),
  exchange({
    code: "BSE",
    name: "Botswana Stock Exchange",
    mic: "XBOT",
    timeZone: "Africa/Gaborone",
    currency: "BWP",
    suffix: "BW",
    opensAt: hm(10),
    closesAt: hm(14),
    settlementDays: 3,
    calendar: [
      off("2025-01-01", NY),
      off("2025-01-02", "New Year Holiday"),
      off("2025-04-18", GF),
      off("2025-04-21", EM),
      off("2025-05-01", LABOUR),
      off("2025-05-29", "Ascension Day"),
      off("2025-07-01", "Sir Seretse Khama Day"),
      off("2025-07-21", "President's Day"),
      off("2025-07-22", "President's Day Holiday"),
      off("2025-09-30", "Botswana Day"),
      off("2025-10-01", "Botswana Day Holiday"),
      off("2025-12-25", XMAS),
      off("2025-12-26", BOXING),
      off("2026-01-01", NY),
      off("2026-01-02", "New Year Holiday"),
      off("2026-04-03", GF),
      off("2026-04-06", EM),
      off("2026-05-01", LABOUR),
      off("2026-05-14", "Ascension Day"),
      off("2026-07-01", "Sir Seretse Khama Day"),
      off("2026-07-20", "President's Day"),
      off("2026-07-21", "President's Day Holiday"),
      off("2026-09-30", "Botswana Day"),
      off("2026-10-01", "Botswana Day Holiday"),
      off("2026-12-25", XMAS),
      off("2027-01-01", NY),
      off("2027-03-26", GF),
      off("2027-03-29", EM),
      off("2027-05-06", "Ascension Day"),
      off("2027-07-01", "Sir Seretse Khama Day"),
      off("2027-07-19", "President's Day"),
      off("2027-07-20", "President's Day Holiday"),
      off("2027-09-30", "Botswana Day"),
      off("2027-10-01", "Botswana Day Holiday"),
      off("2027-12-27", "Boxing Day (observed)")
    ]
  }),
  exchange({
    code: "LUSE",
    name: "Lusaka Securities Exchange",
    mic: "XLUS",
    timeZone: "Africa/Lusaka",
    currency: "ZMW",
    suffix: "ZM",
    opensAt: hm(10),
    closesAt: hm(13),
    settlementDays: 3,
    calendar: [
      off("2025-01-01", NY),
      off("2025-03-12", "Youth Day"),
      off("2025-04-18", GF),
      off("2025-04-21", EM),
      off("2025-04-28", "Kenneth Kaunda Day"),
      off("2025-05-01", LABOUR),
      off("2025-05-26", "Africa Freedom Day (observed)"),
      off("2025-07-07", "Heroes' Day"),
      off("2025-07-08", "Unity Day"),
      off("2025-08-04", "Farmers' Day"),
      off("2025-10-24", "Independence Day"),
      off("2025-12-25", XMAS),
      off("2026-01-01", NY),
      off("2026-03-09", "International Women's Day (observed)"),
      off("2026-03-12", "Youth Day"),
      off("2026-04-03", GF),
      off("2026-04-06", EM),
      off("2026-04-28", "Kenneth Kaunda Day"),
      off("2026-05-01", LABOUR),
      off("2026-05-25", "Africa Freedom Day"),
      off("2026-07-06", "Heroes' Day"),
      off("2026-07-07", "Unity Day"),
      off("2026-08-03", "Farmers' Day"),
      est("2026-08-13", "General Election Day"),
      off("2026-10-19", "National Day of Prayer (observed)"),
      off("2026-12-25", XMAS),
      off("2027-01-01", NY),
      off("2027-03-08", "International Women's Day"),
      off("2027-03-12", "Youth Day"),
      off("2027-03-26", GF),
      off("2027-03-29", EM),
      off("2027-04-28", "Kenneth Kaunda Day"),
      off("2027-05-25", "Africa Freedom Day"),
      off("2027-07-05", "Heroes' Day"),
      off("2027-07-06", "Unity Day"),
      off("2027-08-02", "Farmers' Day"),
      off("2027-10-18", "National Day of Prayer"),
      off("2027-10-25", "Independence Day (observed)")
    ]
  }),
  exchange({
    code: "EGX",
    name: "The Egyptian Exchange",
    mic: "XCAI",
    timeZone: "Africa/Cairo",
    currency: "EGP",
    suffix: "EG",
    opensAt: hm(10),
    closesAt: hm(14, 30),
    tradingDays: SUN_THU,
    settlementDays: 2,
    calendar: [
      off("2025-01-07", "Coptic Christmas"),
      est("2025-01-30", "January 25 Revolution and Police Day (moved to Thursday)"),
      off("2025-03-30", FITR),
      off("2025-03-31", FITR),
      off("2025-04-01", FITR),
      off("2025-04-21", "Sham El-Nessim"),
      off("2025-05-01", LABOUR),
      off("2025-06-05", "Arafat Day"),
      off("2025-06-08", ADHA),
      off("2025-06-09", ADHA),
      off("2025-06-26", "Islamic New Year"),
      est("2025-07-03", "June 30 Revolution (moved to Thursday)"),
      est("2025-07-24", "July 23 Revolution Day (moved to Thursday)"),
      off("2025-09-04", "Prophet's Birthday"),
      est("2025-10-09", "Armed Forces Day (moved to Thursday)"),
      off("2026-01-07", "Coptic Christmas"),
      off("2026-01-25", "January 25 Revolution and Police Day"),
      est("2026-03-22", FITR),
      off("2026-04-13", "Sham El-Nessim"),
      est("2026-05-26", "Arafat Day"),
      est("2026-05-27", ADHA),
      est("2026-05-28", ADHA),
      est("2026-06-16", "Islamic New Year"),
      off("2026-06-30", "June 30 Revolution"),
      off("2026-07-23", "July 23 Revolution Day"),
      est("2026-08-25", "Prophet's Birthday"),
      off("2026-10-06", "Armed Forces Day"),
      off("2027-01-07", "Coptic Christmas"),
      off("2027-01-25", "January 25 Revolution and Police Day"),
      est("2027-03-09", FITR),
      est("2027-03-10", FITR),
      est("2027-03-11", FITR),
      off("2027-04-25", "Sinai Liberation Day"),
      off("2027-05-03", "Sham El-Nessim"),
      est("2027-05-16", ADHA),
      est("2027-05-17", ADHA),
      est("2027-05-18", ADHA),
      est("2027-05-19", ADHA),
      est("2027-06-06", "Islamic New Year"),
      off("2027-06-30", "June 30 Revolution"),
      est("2027-08-15", "Prophet's Birthday"),
      off("2027-10-06", "Armed Forces Day")
    ]
  }),
  exchange({
    code: "DSE",
    name: "Dar es Salaam Stock Exchange",
    mic: "XDAR",
    timeZone: "Africa/Dar_es_Salaam",
    currency: "TZS",
    suffix: "TZ",
    opensAt: hm(10),
    closesAt: hm(16),
    settlementDays: 3,
    calendar: [
      off("2025-01-01", NY),
      off("2025-03-31", FITR),
      off("2025-04-01", `${FITR} holiday`),
      off("2025-04-07", "Karume Day"),
      off("2025-04-18", GF),
      off("2025-04-21", EM),
      off("2025-05-01", "Workers' Day"),
      est("2025-06-06", ADHA),
      off("2025-07-07", "Saba Saba"),
      off("2025-08-08", "Nane Nane"),
      est("2025-09-05", "Maulid"),
      off("2025-10-14", "Mwalimu Nyerere Day"),
      off("2025-10-29", "General Election Day"),
      off("2025-12-09", "Independence Day"),
      off("2025-12-25", XMAS),
      off("2025-12-26", BOXING),
      off("2026-01-01", NY),
      off("2026-01-12", "Zanzibar Revolution Day"),
      est("2026-03-20", FITR),
      off("2026-04-03", GF),
      off("2026-04-06", EM),
      off("2026-04-07", "Karume Day"),
      off("2026-05-01", "Workers' Day"),
      est("2026-05-27", ADHA),
      off("2026-07-07", "Saba Saba"),
      est("2026-08-25", "Maulid"),
      off("2026-10-14", "Mwalimu Nyerere Day"),
      off("2026-12-09", "Independence Day"),
      off("2026-12-25", XMAS),
      off("2027-01-01", NY),
      off("2027-01-12", "Zanzibar Revolution Day"),
      est("2027-03-09", FITR),
      est("2027-03-10", `${FITR} holiday`),
      off("2027-03-26", GF),
      off("2027-03-29", EM),
      off("2027-04-07", "Karume Day"),
      off("2027-04-26", "Union Day"),
      off("2027-07-07", "Saba Saba"),
      off("2027-10-14", "Mwalimu Nyerere Day"),
      off("2027-12-09", "Independence Day")
    ]
  }),
  exchange({
    code: "USE",
    name: "Uganda Securities Exchange",
    mic: "XUGA",
    timeZone: "Africa/Kampala",
    currency: "UGX",
    suffix: "UG",
    opensAt: hm(10),
    closesAt: hm(15),
    settlementDays: 3,
    calendar: [
      off("2025-01-01", NY),
      off("2025-03-31", FITR),
      off("2025-04-18", GF),
      off("2025-04-21", EM),
      off("2025-05-01", LABOUR),
      off("2025-06-03", "Uganda Martyrs' Day"),
      off("2025-06-06", ADHA),
      off("2025-06-09", "National Heroes' Day"),
      off("2025-10-09", "Independence Day"),
      off("2025-12-25", XMAS),
      off("2025-12-26", BOXING),
      off("2026-01-01", NY),
      est("2026-01-15", "General Election Day"),
      off("2026-01-26", "NRM Liberation Day"),
      off("2026-02-16", "Archbishop Janani Luwum Day"),
      est("2026-03-20", FITR),
      off("2026-04-03", GF),
      off("2026-04-06", EM),
      off("2026-05-01", LABOUR),
      est("2026-05-27", ADHA),
      off("2026-06-03", "Uganda Martyrs' Day"),
      off("2026-06-09", "National Heroes' Day"),
      off("2026-10-09", "Independence Day"),
      off("2026-12-25", XMAS),
      off("2027-01-01", NY),
      off("2027-01-26", "NRM Liberation Day"),
      off("2027-02-16", "Archbishop Janani Luwum Day"),
      off("2027-03-08", "International Women's Day"),
      est("2027-03-09", FITR),
      off("2027-03-26", GF),
      off("2027-03-29", EM),
      off("2027-06-03", "Uganda Martyrs' Day"),
      off("2027-06-09", "National Heroes' Day")
    ]
  }),
  exchange({
    code: "MSE",
    name: "Malawi Stock Exchange",
    mic: "XMSW",
    timeZone: "Africa/Blantyre",
    currency: "MWK",
    suffix: "MW",
    opensAt: hm(9),
    closesAt: hm(15),
    settlementDays: 3,
    calendar: [
      off("2025-01-01", NY),
      off("2025-01-15", "John Chilembwe Day"),
      off("2025-03-03", "Martyrs' Day"),
      off("2025-03-31", FITR),
      off("2025-04-18", GF),
      off("2025-04-21", EM),
      off("2025-05-01", LABOUR),
      off("2025-05-14", "Kamuzu Day"),
      off("2025-07-07", "Independence Day (observed)"),
      off("2025-09-16", "General Election Day"),
      off("2025-10-15", "Mother's Day"),
      off("2025-12-25", XMAS),
      off("2025-12-26", BOXING),
      off("2026-01-01", NY),
      off("2026-01-15", "John Chilembwe Day"),
      off("2026-03-03", "Martyrs' Day"),
      est("2026-03-20", FITR),
      off("2026-04-03", GF),
      off("2026-04-06", EM),
      off("2026-05-01", LABOUR),
      off("2026-05-14", "Kamuzu Day"),
      off("2026-07-06", "Independence Day"),
      off("2026-10-15", "Mother's Day"),
      off("2026-12-25", XMAS),
      off("2026-12-28", "Boxing Day (observed)"),
      off("2027-01-01", NY),
      off("2027-01-15", "John Chilembwe Day"),
      off("2027-03-03", "Martyrs' Day"),
      est("2027-03-09", FITR),
      off("2027-03-26", GF),
      off("2027-03-29", EM),
      off("2027-05-03", "Labour Day (observed)"),
      off("2027-05-14", "Kamuzu Day"),
      off("2027-07-06", "Independence Day"),
      off("2027-10-15", "Mother's Day"),
      off("2027-12-27", "Christmas Day (observed)"),
      off("2027-12-28", "Boxing Day (observed)")
    ]
  }),
  exchange({
    code: "CSE",
    name: "Casablanca Stock Exchange",
    mic: "XCAS",
    timeZone: "Africa/Casablanca",
    currency: "MAD",
    suffix: "MA",
    opensAt: hm(9, 30),
    closesAt: hm(15, 30),
    settlementDays: 3,
    calendar: [
      off("2025-01-01", NY),
      off("2025-01-14", "Amazigh New Year"),
      off("2025-03-31", FITR),
      off("2025-04-01", FITR),
      off("2025-05-01", LABOUR),
      off("2025-06-27", "Islamic New Year"),
      off("2025-07-30", "Throne Day"),
      off("2025-08-14", "Oued Ed-Dahab Day"),
      off("2025-08-20", "Revolution of the King and the People"),
      off("2025-08-21", "Youth Day"),
      est("2025-09-05", "Prophet's Birthday"),
      off("2025-11-06", "Green March"),
      off("2025-11-18", "Independence Day"),
      off("2026-01-01", NY),
      off("2026-01-14", "Amazigh New Year"),
      est("2026-03-20", FITR),
      off("2026-05-01", LABOUR),
      est("2026-05-27", ADHA),
      est("2026-05-28", ADHA),
      est("2026-06-17", "Islamic New Year"),
      off("2026-07-30", "Throne Day"),
      off("2026-08-14", "Oued Ed-Dahab Day"),
      off("2026-08-20", "Revolution of the King and the People"),
      off("2026-08-21", "Youth Day"),
      est("2026-08-26", "Prophet's Birthday"),
      est("2026-08-27", "Prophet's Birthday"),
      off("2026-11-06", "Green March"),
      off("2026-11-18", "Independence Day"),
      off("2027-01-01", NY),
      off("2027-01-11", "Proclamation of Independence"),
      off("2027-01-14", "Amazigh New Year"),
      est("2027-03-10", FITR),
      est("2027-03-11", FITR),
      est("2027-05-17", ADHA),
      est("2027-05-18", ADHA),
      est("2027-06-07", "Islamic New Year"),
      off("2027-07-30", "Throne Day"),
      est("2027-08-16", "Prophet's Birthday"),
      est("2027-08-17", "Prophet's Birthday"),
      off("2027-08-20", "Revolution of the King and the People"),
      off("2027-11-18", "Independence Day")
    ]
  }),
  exchange({
    code: "SEM",
    name: "Stock Exchange of Mauritius",
    mic: "XMAU",
    timeZone: "Indian/Mauritius",
    currency: "MUR",
    suffix: "MU",
    opensAt: hm(10),
    closesAt: hm(13, 30),
    settlementDays: 3,
    calendar: [
      off("2025-01-01", NY),
      off("2025-01-02", "New Year Holiday"),
      off("2025-01-29", "Chinese Spring Festival"),
      off("2025-02-11", "Thaipoosam Cavadee"),
      off("2025-02-26", "Maha Shivaratree"),
      off("2025-03-12", "Independence and Republic Day"),
      off("2025-03-31", FITR),
      off("2025-05-01", LABOUR),
      off("2025-08-15", "Assumption of the Blessed Virgin Mary"),
      off("2025-08-28", "Ganesh Chaturthi"),
      off("2025-10-20", "Divali"),
      off("2025-12-25", XMAS),
      off("2026-01-01", NY),
      off("2026-01-02", "New Year Holiday"),
      off("2026-02-17", "Chinese Spring Festival"),
      off("2026-03-12", "Independence and Republic Day"),
      est("2026-03-19", "Ougadi"),
      est("2026-03-20", FITR),
      off("2026-05-01", LABOUR),
      est("2026-09-15", "Ganesh Chaturthi"),
      off("2026-11-02", "Arrival of Indentured Labourers"),
      off("2026-12-25", XMAS),
      off("2027-01-01", NY),
      est("2027-01-22", "Thaipoosam Cavadee"),
      off("2027-02-01", "Abolition of Slavery"),
      est("2027-03-09", FITR),
      off("2027-03-12", "Independence and Republic Day"),
      est("2027-04-07", "Ougadi"),
      est("2027-10-29", "Divali"),
      off("2027-11-02", "Arrival of Indentured Labourers")
    ]
  })
]

/** Every exchange code the spec names (each has a calendar above). */
export const SPEC_EXCHANGE_CODES = ["NSE", "NGX", "JSE", "GSE", "BRVM", "ZSE", "BSE", "LUSE", "EGX", "DSE", "USE", "MSE", "CSE", "SEM"] as const
export type ExchangeCode = (typeof SPEC_EXCHANGE_CODES)[number]

/** The years the holiday tables cover; outside them only weekends close an exchange. */
export const CALENDAR_YEARS = [2025, 2026, 2027] as const

const BY_CODE = new Map<string, Exchange>(EXCHANGES.map((e) => [e.code, e]))
export const findExchange = (code: string): Exchange | undefined => BY_CODE.get(code)

interface LocalParts {
  readonly date: string
  readonly weekday: number
  readonly minutes: number
}

const formatters = new Map<string, Intl.DateTimeFormat>()
const formatterFor = (timeZone: string): Intl.DateTimeFormat => {
  let f = formatters.get(timeZone)
  if (f === undefined) {
    f = new Intl.DateTimeFormat("en-GB", {
      timeZone,
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      weekday: "short"
    })
    formatters.set(timeZone, f)
  }
  return f
}

const WEEKDAYS: Record<string, number> = { Mon: 1, Tue: 2, Wed: 3, Thu: 4, Fri: 5, Sat: 6, Sun: 7 }

/**
 * Local parts change once a minute, and every request asks for them per instrument: the last minute's answer per
 * time zone is kept (Intl formatting costs microseconds each time). Pure: same input, same output.
 */
const lastMinute = new Map<string, { readonly minute: number; readonly parts: LocalParts }>()

/** Local calendar date, ISO weekday and minute of day of `epochMillis` in `timeZone`. */
export const localParts = (epochMillis: number, timeZone: string): LocalParts => {
  const minute = Math.floor(epochMillis / 60_000)
  const cached = lastMinute.get(timeZone)
  if (cached !== undefined && cached.minute === minute) return cached.parts
  const parts = formatParts(minute * 60_000, timeZone)
  lastMinute.set(timeZone, { minute, parts })
  return parts
}

/** The calendar date at the exchange (a dividend's day turns at the exchange's midnight, not UTC's). */
export const localDate = (exchange: string, now: number): string => localParts(now, findExchange(exchange)?.timeZone ?? "UTC").date

const formatParts = (epochMillis: number, timeZone: string): LocalParts => {
  const parts: Record<string, string> = {}
  for (const p of formatterFor(timeZone).formatToParts(epochMillis)) parts[p.type] = p.value
  return {
    date: `${parts.year}-${parts.month}-${parts.day}`,
    weekday: WEEKDAYS[parts.weekday ?? ""] ?? 0,
    minutes: Number(parts.hour) * 60 + Number(parts.minute)
  }
}

export type MarketPhase = "OPEN" | "CLOSED" | "HOLIDAY"

const closures = new WeakMap<Exchange, ReadonlySet<string>>()
const closureSet = (exchange: Exchange): ReadonlySet<string> => {
  let set = closures.get(exchange)
  if (set === undefined) {
    set = new Set(exchange.holidays)
    closures.set(exchange, set)
  }
  return set
}

const earlies = new WeakMap<Exchange, ReadonlyMap<string, number>>()
const earlyCloses = (exchange: Exchange): ReadonlyMap<string, number> => {
  let map = earlies.get(exchange)
  if (map === undefined) {
    map = new Map(exchange.calendar.flatMap((h) => (h.closesAt === undefined ? [] : [[h.date, h.closesAt] as const])))
    earlies.set(exchange, map)
  }
  return map
}

/** The holiday entry (closure or early close) of a local date, if any. */
export const holidayOn = (exchange: Exchange, date: string): HolidayEntry | undefined => exchange.calendar.find((h) => h.date === date)

const isTradingWeekday = (exchange: Exchange, weekday: number): boolean => exchange.tradingDays.includes(weekday)

/** The phase at local `minutes` of local `date` (ISO `weekday`). */
const phaseOfLocal = (exchange: Exchange, date: string, weekday: number, minutes: number): MarketPhase => {
  if (!isTradingWeekday(exchange, weekday)) return "CLOSED"
  if (closureSet(exchange).has(date)) return "HOLIDAY"
  if (minutes < exchange.opensAt) return "CLOSED"
  return minutes < (earlyCloses(exchange).get(date) ?? exchange.closesAt) ? "OPEN" : "CLOSED"
}

export const phaseAt = (exchange: Exchange, epochMillis: number): MarketPhase => {
  const local = localParts(epochMillis, exchange.timeZone)
  return phaseOfLocal(exchange, local.date, local.weekday, local.minutes)
}

export const isOpen = (exchange: Exchange, epochMillis: number): boolean => phaseAt(exchange, epochMillis) === "OPEN"

// ---------------------------------------------------------------------------------------------------------------
// Local wall time <-> instants, sessions, next changes
// ---------------------------------------------------------------------------------------------------------------

const DAY_MS = 86_400_000
const MINUTE_MS = 60_000

const dateToUtcMidnight = (date: string): number => Date.UTC(Number(date.slice(0, 4)), Number(date.slice(5, 7)) - 1, Number(date.slice(8, 10)))
const utcDateOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10)

/** `date` plus `days` calendar days (ISO dates, no time zone involved). */
export const addDays = (date: string, days: number): string => utcDateOf(dateToUtcMidnight(date) + days * DAY_MS)

/** Offset of `timeZone` from UTC at `epochMillis`, in milliseconds (minute precision). */
const offsetAt = (epochMillis: number, timeZone: string): number => {
  const minute = Math.floor(epochMillis / MINUTE_MS) * MINUTE_MS
  const p = formatParts(minute, timeZone)
  return dateToUtcMidnight(p.date) + p.minutes * MINUTE_MS - minute
}

/**
 * The instant local wall time `minutes` after midnight of `date` happens in `timeZone`. A wall time skipped by a
 * daylight-saving jump resolves to the instant after the jump (never used by a session: no exchange opens then).
 */
export const instantAt = (date: string, minutes: number, timeZone: string): number => {
  const key = `${timeZone}|${date}|${minutes}`
  const cached = instants.get(key)
  if (cached !== undefined) return cached
  if (instants.size >= MAX_CACHED_INSTANTS) instants.clear()
  const t = computeInstantAt(date, minutes, timeZone)
  instants.set(key, t)
  return t
}

/**
 * Sessions and midnights are asked for again and again (every status answer, every phase-change search) and each
 * costs a few Intl calls: answers are kept, keyed by zone, date and minute (pure, so a cache cannot change a result;
 * bounded, so a clock wandering over centuries cannot grow it without end).
 */
const instants = new Map<string, number>()
const MAX_CACHED_INSTANTS = 50_000

const computeInstantAt = (date: string, minutes: number, timeZone: string): number => {
  const wall = dateToUtcMidnight(date) + minutes * MINUTE_MS
  let t = wall - offsetAt(wall, timeZone)
  t = wall - offsetAt(t, timeZone)
  const back = formatParts(t, timeZone)
  if (back.date !== date || back.minutes !== minutes) {
    // In a gap: the first instant whose local wall time is at or after the one asked for.
    const later = wall - offsetAt(t + 3 * 3_600_000, timeZone)
    return Math.max(t, later)
  }
  return t
}

export interface Session {
  /** Local date of the session. */
  readonly date: string
  readonly opensAt: number
  readonly closesAt: number
  readonly earlyClose: boolean
}

/** The session an exchange holds on local `date`, or undefined (not a trading day, or a full closure). */
/** ISO weekday (1 Monday .. 7 Sunday) of an ISO date. */
const weekdayOf = (date: string): number => ((new Date(dateToUtcMidnight(date)).getUTCDay() + 6) % 7) + 1

export const sessionOn = (exchange: Exchange, date: string): Session | undefined => {
  const weekday = weekdayOf(date)
  if (!isTradingWeekday(exchange, weekday) || closureSet(exchange).has(date)) return undefined
  const entry = holidayOn(exchange, date)
  const close = entry?.closesAt ?? exchange.closesAt
  return {
    date,
    opensAt: instantAt(date, exchange.opensAt, exchange.timeZone),
    closesAt: instantAt(date, close, exchange.timeZone),
    earlyClose: entry?.closesAt !== undefined
  }
}

/** How far ahead the next session is looked for: longer than any closure in the tables (an Eid week plus weekends). */
const HORIZON_DAYS = 30

/** The first session whose open is strictly after `epochMillis`. */
export const nextSessionAfter = (exchange: Exchange, epochMillis: number): Session | undefined => {
  const today = localParts(epochMillis, exchange.timeZone).date
  for (let i = 0; i <= HORIZON_DAYS; i++) {
    const s = sessionOn(exchange, addDays(today, i))
    if (s !== undefined && s.opensAt > epochMillis) return s
  }
  return undefined
}

/** The session of the local day of `epochMillis`, if the exchange holds one that day. */
export const sessionToday = (exchange: Exchange, epochMillis: number): Session | undefined =>
  sessionOn(exchange, localParts(epochMillis, exchange.timeZone).date)

/**
 * The first instant strictly after `epochMillis` at which `phaseAt` differs from its value at `epochMillis`: an open,
 * a close, or the local midnight a closure begins or ends. Undefined when none within the horizon.
 */
export const nextPhaseChange = (exchange: Exchange, epochMillis: number): number | undefined => {
  const current = phaseAt(exchange, epochMillis)
  const today = localParts(epochMillis, exchange.timeZone).date
  for (let i = 0; i <= HORIZON_DAYS; i++) {
    const date = addDays(today, i)
    // The phase at each boundary is known from its local wall time: no time-zone lookup per candidate.
    const midnight = instantAt(date, 0, exchange.timeZone)
    if (midnight > epochMillis && phaseOfLocal(exchange, date, weekdayOf(date), 0) !== current) return midnight
    const s = sessionOn(exchange, date)
    if (s === undefined) continue
    if (s.opensAt > epochMillis && current !== "OPEN") return s.opensAt
    if (s.closesAt > epochMillis && current === "OPEN") return s.closesAt
  }
  return undefined
}

/** Closures and early closes with local dates in [from, to] (ISO dates, inclusive), by date. */
export const holidaysBetween = (exchange: Exchange, from: string, to: string): ReadonlyArray<HolidayEntry> =>
  exchange.calendar.filter((h) => h.date >= from && h.date <= to)

/** `HH:MM` of local minutes after midnight. */
export const hhmm = (minutes: number): string => `${String(Math.floor(minutes / 60)).padStart(2, "0")}:${String(minutes % 60).padStart(2, "0")}`

/** ISO 8601 local time with its offset (`2026-01-05T12:30:00.000+03:00`) of `epochMillis` in `timeZone`. */
export const localIso = (epochMillis: number, timeZone: string): string => {
  const local = localParts(epochMillis, timeZone)
  const minute = Math.floor(epochMillis / MINUTE_MS) * MINUTE_MS
  const offset = dateToUtcMidnight(local.date) + local.minutes * MINUTE_MS - minute
  const wall = new Date(epochMillis + offset).toISOString().slice(0, 23)
  const sign = offset < 0 ? "-" : "+"
  const abs = Math.abs(offset) / MINUTE_MS
  return `${wall}${sign}${hhmm(abs)}`
}

/** The exchanges the simulator's default start instant waits for (the first catalogue's two markets). */
const START_EXCHANGES = EXCHANGES.filter((e) => e.code === "NSE" || e.code === "JSE")

/** First instant at or after `from`, on a 15-minute grid, when every exchange in `exchanges` is open (one-week search). */
export const nextInstantAllOpen = (from: number, exchanges: ReadonlyArray<Exchange> = START_EXCHANGES): number | undefined => {
  const step = 15 * 60_000
  if (exchanges.every((e) => isOpen(e, from))) return from
  const first = Math.ceil(from / step) * step
  for (let t = first; t < from + 8 * 86_400_000; t += step) {
    if (exchanges.every((e) => isOpen(e, t))) return t
  }
  return undefined
}
