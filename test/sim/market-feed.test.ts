/**
 * The market feed on its own: what is published at an instant (captures on the 900 s grid while the exchange is
 * open, the end-of-day pass, the 15-minute delay), pins shown only after the delay, the seeded history before the
 * run, and the quote's day fields equal to that day's steps. Times are the harness's Monday (NSE 06:00-12:00 UTC,
 * JSE 07:00-15:00 UTC); the reference instants below are written from the exchanges' hours, not from the engine.
 */
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { findExchange, isOpen } from "../../engine/domain/calendar.ts"
import { INSTRUMENTS, type Instrument } from "../../engine/domain/instruments.ts"
import type { FeedMemory } from "../../engine/sim/durable-time.ts"
import { BUCKET_MS, HISTORY_DAYS, MarketFeed, type Observation } from "../../engine/sim/market-feed.ts"

const MONDAY = Date.parse("2026-11-23T08:00:00.000Z")
const at = (iso: string) => Date.parse(iso)
const instrument = (symbol: string): Instrument => {
  const found = INSTRUMENTS.find((i) => i.symbol === symbol)
  if (found === undefined) throw new Error(symbol)
  return found
}
const SCOM = instrument("SCOM.KE")
const NSE = findExchange("NSE")!

/** A feed built at `start` whose clock the test moves by assigning `clock.now`. */
const feedAt = (start = MONDAY, seed = 1, replay?: Omit<FeedMemory, "origin">) => {
  const clock = { now: start }
  const feed = Effect.runSync(
    MarketFeed.make(
      seed,
      start,
      Effect.sync(() => clock.now),
      replay === undefined ? {} : { replay }
    )
  )
  const observe = (i: Instrument, now: number): Observation => Effect.runSync(feed.observe(i, now))
  const steps = (i: Instrument, from: number, to: number, now: number) => Effect.runSync(feed.steps(i, from, to, now))
  const pin = (i: Instrument, price: number, now: number) => {
    clock.now = now
    return Effect.runSync(feed.pin(i, price))
  }
  return { feed, observe, steps, pin }
}

describe("what the feed publishes", () => {
  it("shows, during a session, the refresh made 15 to 30 minutes ago, never a younger one", () => {
    const { observe } = feedAt()
    for (const [now, asOf] of [
      ["2026-11-23T08:00:00.000Z", "2026-11-23T07:45:00.000Z"],
      ["2026-11-23T08:14:59.999Z", "2026-11-23T07:45:00.000Z"],
      ["2026-11-23T08:15:00.000Z", "2026-11-23T08:00:00.000Z"],
      ["2026-11-23T08:29:59.000Z", "2026-11-23T08:00:00.000Z"]
    ] as const) {
      const o = observe(SCOM, at(now))
      expect(new Date(o.asOf).toISOString(), now).toBe(asOf)
      expect(o.publishedAt).toBe(o.asOf + 900_000)
    }
  })

  it("takes an end-of-day pass at the close and then holds it overnight (it goes stale), until the next open", () => {
    const { observe } = feedAt()
    // NSE closes at 15:00 Nairobi = 12:00 UTC: the pass at 12:00 is published at 12:15.
    expect(observe(SCOM, at("2026-11-23T12:14:59.000Z")).asOf).toBe(at("2026-11-23T11:45:00.000Z"))
    const close = observe(SCOM, at("2026-11-23T12:15:00.000Z"))
    expect(close.asOf).toBe(at("2026-11-23T12:00:00.000Z"))
    expect(close.price).toBe(observe(SCOM, at("2026-11-23T12:14:59.000Z")).price)
    expect(observe(SCOM, at("2026-11-24T06:14:59.000Z")).asOf).toBe(close.asOf)
    // Tuesday's first refresh (09:00 Nairobi, 06:00 UTC) is published at 06:15.
    expect(observe(SCOM, at("2026-11-24T06:15:00.000Z")).asOf).toBe(at("2026-11-24T06:00:00.000Z"))
  })

  it("moves only while the exchange is open: every step is at an open instant, and prices hold across the night", () => {
    const { observe, steps } = feedAt()
    const now = at("2026-11-27T20:00:00.000Z")
    const all = steps(SCOM, at("2026-11-16T00:00:00.000Z"), now, now)
    expect(all.length).toBe(10 * 24) // two weeks of 6-hour sessions, 24 refreshes each
    for (const s of all) expect(isOpen(NSE, s.at), new Date(s.at).toISOString()).toBe(true)
    for (let i = 1; i < all.length; i++) expect(all[i]!.before).toBe(all[i - 1]!.price)
    expect(new Set(all.map((s) => s.price)).size).toBeGreaterThan(20)
    expect(observe(SCOM, now).price).toBe(all.at(-1)!.price)
  })

  it("holds a seeded history of more than five years before the run, continuous into the run's path", () => {
    const { feed, steps } = feedAt()
    expect(feed.coverageStart).toBe(Math.floor(MONDAY / BUCKET_MS) * BUCKET_MS - HISTORY_DAYS * 86_400_000)
    const history = steps(SCOM, feed.coverageStart, MONDAY, MONDAY)
    expect(history[0]!.at - feed.coverageStart).toBeLessThan(4 * 86_400_000)
    expect(history.length).toBeGreaterThan(5 * 250 * 24)
    for (let i = 1; i < history.length; i++) expect(history[i]!.before).toBe(history[i - 1]!.price)
    // nothing before the coverage, nothing published after now - 15 minutes
    expect(steps(SCOM, feed.coverageStart - 86_400_000 * 30, feed.coverageStart - 1, MONDAY)).toEqual([])
    expect(history.at(-1)!.at).toBe(at("2026-11-23T07:45:00.000Z"))
  })

  it("drops the least recently used long histories beyond its bound and walks them again to the same prices", () => {
    const feed = Effect.runSync(MarketFeed.make(1, MONDAY, Effect.succeed(MONDAY), { maxLongHistories: 1 }))
    const fiveYears = (i: Instrument) => Effect.runSync(feed.steps(i, feed.coverageStart, MONDAY, MONDAY))
    const first = fiveYears(SCOM)
    const npn = fiveYears(instrument("NPN.ZA"))
    expect(fiveYears(SCOM)).toEqual(first)
    expect(fiveYears(instrument("NPN.ZA"))).toEqual(npn)
    expect(first).toEqual(feedAt().steps(SCOM, feedAt().feed.coverageStart, MONDAY, MONDAY))
  })

  it("gives the same prices for the same seed and start, other prices for another seed", () => {
    const now = at("2026-11-25T10:00:00.000Z")
    const a = feedAt().steps(SCOM, at("2026-11-01T00:00:00.000Z"), now, now)
    expect(feedAt().steps(SCOM, at("2026-11-01T00:00:00.000Z"), now, now)).toEqual(a)
    expect(feedAt(MONDAY, 2).steps(SCOM, at("2026-11-01T00:00:00.000Z"), now, now)).not.toEqual(a)
  })

  it("answers open, high, low, volume of the observation's trading day and the previous close from that day's steps", () => {
    const { observe, steps } = feedAt()
    for (const now of ["2026-11-24T09:40:00.000Z", "2026-11-24T20:00:00.000Z", "2026-11-25T05:00:00.000Z"]) {
      const o = observe(SCOM, at(now))
      const day = steps(SCOM, at("2026-11-24T00:00:00.000Z"), at("2026-11-24T23:59:59.999Z"), at(now))
      const prices = day.flatMap((s) => [s.before, s.price])
      expect(o.open, now).toBe(day[0]!.before)
      expect(o.previousClose).toBe(steps(SCOM, at("2026-11-23T00:00:00.000Z"), at("2026-11-23T23:59:59.999Z"), at(now)).at(-1)!.price)
      expect([o.dayHigh, o.dayLow]).toEqual([Math.max(...prices), Math.min(...prices)])
      expect(o.volume).toBe(day.reduce((sum, s) => sum + s.volume, 0))
      expect(o.price).toBe(day.at(-1)!.price)
    }
  })
})

describe("pins", () => {
  it("replayed into a new feed at their index (a restarted engine, E-298), show the same prices as the feed they were made on", () => {
    const first = feedAt()
    const made = [first.pin(SCOM, 412_345, at("2026-11-23T08:05:00.000Z")), first.pin(SCOM, 398_000, at("2026-11-24T11:40:00.000Z"))]
    const again = feedAt(MONDAY, 1, { pins: made.map((p) => ({ version: 1 as const, instrumentId: SCOM.id, k: p.index, price: p.price })), rescales: [] })
    const fresh = feedAt()
    for (const now of ["2026-11-23T08:35:00.000Z", "2026-11-24T12:00:00.000Z", "2026-11-25T10:00:00.000Z"]) {
      expect(again.observe(SCOM, at(now)), now).toEqual(first.observe(SCOM, at(now)))
      expect(fresh.observe(SCOM, at(now)).price, `${now}: the pins change the price`).not.toBe(first.observe(SCOM, at(now)).price)
    }
  })

  it("are captured at the next open refresh instant and shown only 15 minutes after it", () => {
    const { observe, pin } = feedAt()
    const before = observe(SCOM, at("2026-11-23T08:20:00.000Z")).price
    const set = pin(SCOM, 412_345, at("2026-11-23T08:05:00.000Z"))
    const { index: _index, ...effect } = set
    expect(effect).toEqual({ price: 412_345, effectiveAt: at("2026-11-23T08:15:00.000Z"), visibleFrom: at("2026-11-23T08:30:00.000Z") })
    expect(observe(SCOM, at("2026-11-23T08:20:00.000Z")).price).toBe(before)
    expect(observe(SCOM, at("2026-11-23T08:29:59.999Z")).price).toBe(before)
    const shown = observe(SCOM, at("2026-11-23T08:30:00.000Z"))
    expect([shown.price, shown.asOf]).toEqual([412_345, at("2026-11-23T08:15:00.000Z")])
    // the walk stops: the price holds at the pin, through the close and the next day
    expect(observe(SCOM, at("2026-11-24T11:00:00.000Z")).price).toBe(412_345)
  })

  it("set exactly on a refresh instant is captured there; a later pin replaces it from its own instant", () => {
    const { observe, pin } = feedAt()
    expect(pin(SCOM, 300_000, at("2026-11-23T09:00:00.000Z")).effectiveAt).toBe(at("2026-11-23T09:00:00.000Z"))
    expect(pin(SCOM, 310_000, at("2026-11-23T09:20:00.000Z")).effectiveAt).toBe(at("2026-11-23T09:30:00.000Z"))
    expect(observe(SCOM, at("2026-11-23T09:44:59.000Z")).price).toBe(300_000)
    expect(observe(SCOM, at("2026-11-23T09:45:00.000Z")).price).toBe(310_000)
  })

  it("set while the exchange is closed is taken at the next session's first refresh", () => {
    const { observe, pin } = feedAt()
    const set = pin(SCOM, 250_000, at("2026-11-23T18:00:00.000Z"))
    expect(set.effectiveAt).toBe(at("2026-11-24T06:00:00.000Z"))
    expect(observe(SCOM, at("2026-11-24T06:14:59.000Z")).price).not.toBe(250_000)
    expect(observe(SCOM, at("2026-11-24T06:15:00.000Z")).price).toBe(250_000)
  })

  it("leave other listings and the published past alone", () => {
    const a = feedAt()
    const b = feedAt()
    const npn = instrument("NPN.ZA")
    a.pin(SCOM, 1_000_000, at("2026-11-23T09:00:00.000Z"))
    const now = at("2026-11-24T10:00:00.000Z")
    expect(a.observe(npn, now)).toEqual(b.observe(npn, now))
    expect(a.steps(SCOM, MONDAY - 86_400_000, at("2026-11-23T08:59:59.000Z"), now)).toEqual(
      b.steps(SCOM, MONDAY - 86_400_000, at("2026-11-23T08:59:59.000Z"), now)
    )
  })
})
