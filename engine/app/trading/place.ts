/**
 * Placing orders (POST /trade and the sub-account's): the dispatcher around domain/trading/decide-order.ts. It checks
 * the request's fields, resolves the symbol, then in one transaction (the partition locked first) loads the account,
 * the quote and the listing, asks the rules, draws the order id only for an accepted order, loads the funds the side
 * needs and writes the plan. Owns: what is loaded and when. Does not own any rule.
 */
import { Effect, Option } from "effect"
import type { Schemas } from "../../contract/wire.ts"
import { type Exchange, findExchange } from "../../domain/calendar.ts"
import { ApiFailure, liftFailure } from "../../domain/errors.ts"
import type { Instrument } from "../../domain/instruments.ts"
import type { RestingType, Side } from "../../domain/order.ts"
import type { TradeInput } from "../../domain/trading/commands.ts"
import {
  type AccountState,
  acceptMarketOrder,
  acceptRestingOrder,
  decideMarketOrder,
  decideRestingOrder,
  type Funds,
  type MarketOrderCommand,
  fundsNeeded,
  restingTerms
} from "../../domain/trading/decide-order.ts"
import { marketFields, restingFields } from "../../domain/trading/order-fields.ts"
import { escrowAccount, walletAccount } from "../../domain/ledger.ts"
import { webhooksRead } from "../../events/webhook-delivery.ts"
import { type Hint, prefetch, type ReadTx, type StoreError, type Tx } from "../../store/port.ts"
import { findSubAccount } from "../accounts.ts"
import { Balances, balanceId, Holdings, holdingId, Quotes, SubAccounts } from "../docs.ts"
import { listingKey } from "../listings.ts"
import { symbolKey } from "../symbols.ts"
import { holding, walletBalance } from "../ledger.ts"
import { nextRefresh } from "../price-alerts/service.ts"
import type { Principal } from "../principal.ts"
import type { TradingDeps } from "./deps.ts"
import { writePlan } from "./write-plan.ts"

/** The funds an order on `side` needs: the wallet's available cash, or the units of `symbol` not yet reserved. */
export const loadFunds = (tx: ReadTx, partition: string, account: string, symbol: string, side: Side): Effect.Effect<Funds, StoreError> =>
  fundsNeeded(side) === "cash"
    ? Effect.map(walletBalance(tx, partition, account), (available) => ({ kind: "cash", available }))
    : Effect.map(holding(tx, partition, account, symbol), (h) => ({ kind: "units", free: h.quantity - h.reserved }))

/**
 * The rows a market order's transaction reads once its partition is locked, named up front so an adapter reads them
 * in one statement (`prefetch`; postgres: E-405): the sub-account, the symbol, the quote, the listing, and the funds
 * with the escrow the ledger entry moves them to, and the webhooks its events' append lists.
 */
const marketReads = (partition: string, account: string, instrument: Instrument, quoteId: string, side: Side): ReadonlyArray<Hint> => {
  const funds: ReadonlyArray<readonly [string, string]> =
    fundsNeeded(side) === "cash"
      ? [
          [Balances.name, balanceId(partition, walletAccount(account))],
          [Balances.name, balanceId(partition, escrowAccount(account))]
        ]
      : [[Holdings.name, holdingId(partition, account, instrument.symbol)]]
  const subAccount: ReadonlyArray<readonly [string, string]> = account === "master" ? [] : [[SubAccounts.name, account]]
  return [...subAccount, symbolKey(instrument), [Quotes.name, quoteId] as const, listingKey(instrument), ...funds, webhooksRead(partition)]
}

export const placing = (d: TradingDeps) => {
  /** The trading sub-account (NOT_FOUND when the partner has none of that id; null for master) and the committed symbol. */
  // Generators made once (Effect.fnUntraced), not per order: see sim/scheduler.ts (E-415).
  const loadSubAccount = Effect.fnUntraced(function* (tx: ReadTx, partition: string, account: string, instrument: Instrument) {
    const subAccount = yield* findSubAccount(tx, partition, account)
    const state: AccountState = { subAccount, committedSymbol: yield* d.symbols.symbolIn(tx, instrument) }
    return state
  })
  // The master account reads only the symbol: a map of that read, not a generator (issue 25).
  const loadAccount = (tx: ReadTx, partition: string, account: string, instrument: Instrument): Effect.Effect<AccountState, ApiFailure | StoreError> =>
    account === "master"
      ? Effect.map(d.symbols.symbolIn(tx, instrument), (committedSymbol): AccountState => ({ subAccount: null, committedSymbol }))
      : loadSubAccount(tx, partition, account, instrument)

  /** MARKET (D-031): quote-gated, PENDING at the desk at once. */
  const placeMarketOrder = Effect.fnUntraced(function* (principal: Principal, account: string, input: TradeInput) {
    const fields = yield* liftFailure(marketFields(input))
    const instrument = yield* liftFailure(d.symbols.resolve(input.symbol, input.exchange))
    const exchange = findExchange(instrument.exchange)
    const { partition } = principal
    const planted = { quoteTtl: d.planted.has("quote-ttl"), feeRounding: d.planted.has("fee-rounding") }
    const command = { placer: { partition, account, markupBps: principal.markupBps }, input, fields, instrument, planted }
    return yield* d.store.transact((tx) => placeMarketIn(tx, command, exchange))
  })

  /** A MARKET order's transaction; its generator made once, not one per order (E-415). */
  const placeMarketIn = Effect.fnUntraced(function* (tx: Tx, command: MarketOrderCommand, exchange: Exchange | undefined) {
    const { placer, input, fields, instrument } = command
    const { partition, account } = placer
    yield* tx.lockPartition(partition)
    yield* prefetch(tx, () => marketReads(partition, account, instrument, fields.quoteId, input.type))
    const now = yield* d.clock.nowHere()
    const accountState = yield* loadAccount(tx, partition, account, instrument)
    const quote = Option.getOrUndefined(yield* Quotes.getHere(tx, fields.quoteId))
    const state = {
      ...accountState,
      quote,
      quoteSymbolNow: quote === undefined ? "" : d.symbols.currentSymbol(quote.symbol),
      listingStatus: yield* d.listings.statusIn(tx, instrument),
      exchange
    }
    const accepted = yield* liftFailure(acceptMarketOrder(state, command, now))
    const orderId = yield* d.entropy.idHere("ord")
    const funds = yield* loadFunds(tx, partition, account, instrument.symbol, input.type)
    const plan = yield* liftFailure(decideMarketOrder(accepted, command, exchange, funds, now, { orderId }))
    return yield* writePlan(d, tx, partition, plan, now)
  })

  /** LIMIT, STOP, STOP_LIMIT (D-031, D-280): no quote; WORKING at once, looked at by its trigger job, expired by its deadline job. */
  const placeRestingOrder = Effect.fnUntraced(function* (principal: Principal, account: string, input: TradeInput, orderType: RestingType) {
    const now = yield* d.clock.nowHere()
    const fields = yield* liftFailure(restingFields(orderType, input, now))
    const instrument = yield* liftFailure(d.symbols.resolve(input.symbol, input.exchange))
    const terms = yield* liftFailure(restingTerms(fields, findExchange(instrument.exchange), now))
    const { partition } = principal
    const command = {
      placer: { partition, account, markupBps: principal.markupBps },
      input,
      orderType,
      fields,
      instrument,
      ...terms,
      firstLook: nextRefresh(now)
    }
    return yield* d.store.transact((tx) =>
      Effect.gen(function* () {
        yield* tx.lockPartition(partition)
        const externalId = yield* liftFailure(acceptRestingOrder(yield* loadAccount(tx, partition, account, instrument), input.symbol, instrument))
        const orderId = yield* d.entropy.idHere("ord")
        const funds = yield* loadFunds(tx, partition, account, instrument.symbol, input.type)
        const plan = yield* liftFailure(decideRestingOrder(command, externalId, funds, now, { orderId }))
        return yield* writePlan(d, tx, partition, plan, now)
      })
    )
  })

  // The dispatch returns the placing's effect: no generator of its own around it (issue 25).
  const trade = (principal: Principal, account: string, input: TradeInput): Effect.Effect<Schemas["Order"], ApiFailure | StoreError> => {
    const orderType = input.orderType ?? "MARKET"
    return orderType === "MARKET" ? placeMarketOrder(principal, account, input) : placeRestingOrder(principal, account, input, orderType as RestingType)
  }

  /**
   * The rows a MARKET order's transaction will read, named before its partition is locked, so the lock statement
   * that begins the transaction reads them (E-472); none for another order type, or a request its checks refuse.
   */
  const readsAhead = (principal: Principal, account: string, input: TradeInput): ReadonlyArray<Hint> => {
    if ((input.orderType ?? "MARKET") !== "MARKET") return []
    const fields = marketFields(input)
    const instrument = d.symbols.resolve(input.symbol, input.exchange)
    if (fields instanceof ApiFailure || instrument instanceof ApiFailure) return []
    return marketReads(principal.partition, account, instrument, fields.quoteId, input.type)
  }

  return { trade, readsAhead }
}
