/**
 * Quotes (GET /quote/{symbol}) and their expiry: the dispatcher around domain/trading/issue-quote.ts. It resolves
 * the symbol, checks the request's terms, reads that the sub-account exists (a quote is a read: frozen and closed
 * sub-accounts may get one and cannot trade on it), observes the price, draws the quote's id once the request is
 * accepted (E-350), and in one transaction drops the partner's quotes past their keep, books the expiry job and
 * stores the quote with that job's seq (the trade that uses it deletes the job, E-295).
 * Owns: what is loaded and written. Does not own the rules.
 */
import { Effect, Option } from "effect"
import type { Schemas } from "../../contract/wire.ts"
import { EXCHANGES, findExchange } from "../../domain/calendar.ts"
import { fail, liftFailure } from "../../domain/errors.ts"
import { decideQuote, decideQuoteExpiry, derivedUnits, QUOTE_EXPIRE_JOB, type QuoteQuery, quoteTerms } from "../../domain/trading/issue-quote.ts"
import type { EventLog } from "../../events/event-log.ts"
import type { EngineClock } from "../../sim/clock.ts"
import type { MarketFeed } from "../../sim/market-feed.ts"
import type { Entropy } from "../../sim/random.ts"
import type { Scheduler } from "../../sim/scheduler.ts"
import { pruneExpired, type Store, transactIn, type Tx } from "../../store/port.ts"
import { findSubAccount } from "../accounts.ts"
import { quoteKeepUntil, Quotes, timeSortKey } from "../docs.ts"
import { QuoteExpiryPayload } from "../job-payloads.ts"
import type { Principal } from "../principal.ts"
import type { Symbols } from "../symbols.ts"

/** How many quotes past their keep a quote's issue drops: more than one, so a partition catches up after a pause. */
const QUOTES_DROPPED_PER_ISSUE = 4

export interface QuoteDeps {
  readonly store: Store["Service"]
  readonly clock: EngineClock["Service"]
  readonly feed: MarketFeed["Service"]
  readonly entropy: Entropy["Service"]
  readonly scheduler: Scheduler["Service"]
  readonly events: EventLog["Service"]
  readonly symbols: Symbols["Service"]
}

export const quoting = (d: QuoteDeps) => {
  // The quote's write, its generator made once (Effect.fnUntraced), not per quote: see sim/scheduler.ts (E-415).
  const writeQuote = Effect.fnUntraced(function* (tx: Tx, principal: Principal, now: number, quoteId: string, plan: ReturnType<typeof decideQuote>) {
    yield* tx.lockPartition(principal.partition)
    // The partner's quotes past their keep go as new ones come: the collection stays at what its window holds.
    yield* pruneExpired(tx, Quotes.name, principal.partition, now, QUOTES_DROPPED_PER_ISSUE)
    const expiry = yield* d.scheduler.scheduleHere(tx, QUOTE_EXPIRE_JOB, plan.expiryJob.dueAt, { quoteId })
    yield* Quotes.putHere(tx, quoteId, principal.partition, timeSortKey(now, quoteId), { ...plan.quote, expiryJob: expiry.seq })
  })

  const issueQuote = Effect.fnUntraced(function* (principal: Principal, symbol: string, query: QuoteQuery) {
    const instrument = yield* liftFailure(d.symbols.resolve(symbol, query.exchange))
    const terms = yield* liftFailure(quoteTerms(query, findExchange(instrument.exchange)))
    const { account } = terms
    if (account !== "master" && Option.isNone(yield* d.store.read((tx) => Effect.option(findSubAccount(tx, principal.partition, account))))) {
      return yield* Effect.fail(fail("NOT_FOUND", `sub-account ${account} was not found`, { param: "subAccountId" }))
    }
    const now = yield* d.clock.nowHere()
    const observation = yield* d.feed.observe(instrument, now)
    const derived = yield* liftFailure(derivedUnits(terms, observation.price, principal.markupBps))
    const quoteId = yield* d.entropy.idHere("qt")
    const plan = decideQuote(terms, principal, instrument, { price: observation.price, derived }, now, { quoteId })
    // Grouped with the partition's queued commands where the store can (E-406).
    yield* transactIn(d.store, principal.partition, (tx) => writeQuote(tx, principal, now, quoteId, plan))
    const answer: Schemas["Quote"] = plan.answer
    return answer
  })

  /** The listing's exchange for a quote's symbol (the listing's own, else the symbol's suffix). */
  const exchangeOf = (symbol: string) => d.symbols.listingOf(symbol)?.exchange ?? EXCHANGES.find((e) => symbol.endsWith(`.${e.suffix}`))?.code ?? "UNKNOWN"

  // A quote that reached its TTL unused is marked expired and announced (spec event quote.expired).
  const registerExpiry = d.scheduler.register(
    QUOTE_EXPIRE_JOB,
    QuoteExpiryPayload,
    Effect.fnUntraced(function* (tx: Tx, { quoteId }: typeof QuoteExpiryPayload.Type) {
      const found = Option.getOrUndefined(yield* Quotes.get(tx, quoteId))
      const expiry = decideQuoteExpiry(found, found === undefined ? "" : exchangeOf(found.symbol))
      if (expiry === undefined) return
      const q = expiry.quote
      yield* Quotes.put(tx, quoteId, q.partition, timeSortKey(q.issuedAt, quoteId), q, quoteKeepUntil(q))
      yield* d.events.append(tx, q.partition, expiry.event.name, expiry.event.data)
    })
  )

  return { issueQuote, registerExpiry }
}
