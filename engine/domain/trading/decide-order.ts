/**
 * Placing an order (D-031, D-280): a MARKET order on its quote goes PENDING to the desk; a LIMIT, STOP or STOP_LIMIT
 * rests WORKING until its trigger. Either way a BUY escrows its total from the wallet and a SELL reserves its units,
 * refused when the account cannot cover it. Pure: the dispatcher (app/trading/place.ts) loads the state, draws the
 * order id once the order is accepted (an id drawn for a refused order would shift every later id of a run), and
 * writes the plan.
 * Owns: acceptance (account, quote, market, listing), the escrow at placement, the placement plan. Does not own the
 * order arithmetic (domain/order.ts) nor the request's field checks (order-fields.ts).
 */
import { type Exchange, isOpen } from "../calendar.ts"
import { ApiFailure, fail } from "../errors.ts"
import { FX_SOURCE, fxAsOf, rateFor } from "../fx.ts"
import type { Instrument } from "../instruments.ts"
import { BASE_FEE_BPS, type Cents, centsToWire, type Rate6 } from "../money.ts"
import { type OrderRecord, placeMarket, placeResting, type RestingType, type Side } from "../order.ts"
import { orderToWire } from "../order-wire.ts"
import { refuseTrading, type SubAccountRecord } from "../subaccount.ts"
import type { TradeInput } from "./commands.ts"
import { acceptQuote, orderQuantity, type QuoteRecord, usedQuote } from "./decide-quote.ts"
import { pendingEvent } from "./order-events.ts"
import { dayDeadline, type MarketFields, type RestingFields } from "./order-fields.ts"
import { EXPIRE_JOB, type OrderJob, type OrderPlan, type OrderTransition, TRIGGER_JOB, transitionOf } from "./plan.ts"

/** What the account has to cover an order with: a BUY needs cash, a SELL units not yet reserved. */
export type Funds = { readonly kind: "cash"; readonly available: Cents } | { readonly kind: "units"; readonly free: number }

/** Which funds an order on `side` needs (the dispatcher loads only those). */
export const fundsNeeded = (side: Side): Funds["kind"] => (side === "BUY" ? "cash" : "units")

/** Who places the order: the partner environment, the account ("master" or a sub-account id) and the markup. */
export interface Placer {
  readonly partition: string
  readonly account: string
  readonly markupBps: number
}

/** The sub-account trading (null: the master account), and the listing's symbol as the store has it now. */
export interface AccountState {
  readonly subAccount: SubAccountRecord | null
  /** The listing's symbol committed in the store: another process may have changed it since it was resolved (E-230). */
  readonly committedSymbol: string
}

/** The externalId the order carries (null for the master account), or why the account may not trade. */
const tradingExternalId = (s: SubAccountRecord | null): string | null | ApiFailure => (s === null ? null : (refuseTrading(s) ?? s.externalId))

/** A symbol change committed meanwhile (E-230): the symbol the partner used is 404. */
const renamedMeanwhile = (asked: string, instrument: Instrument, committed: string): ApiFailure | undefined =>
  committed === instrument.symbol ? undefined : fail("NOT_FOUND", `symbol ${asked} was not found: it changed to ${committed}`)

/**
 * The escrow of a new order (BUY: its total leaves the wallet; SELL: its units are reserved), or INSUFFICIENT_FUNDS /
 * INSUFFICIENT_HOLDINGS when the account cannot cover it. Never takes more than is available.
 */
export const placementHold = (order: OrderRecord, funds: Funds, now: number): OrderTransition | ApiFailure => {
  if (order.side === "BUY") {
    const available = funds.kind === "cash" ? funds.available : 0
    if (available < order.escrow) {
      return fail("INSUFFICIENT_FUNDS", `the order needs ${centsToWire(order.escrow)} USD and the wallet holds ${centsToWire(available)} USD`)
    }
    return transitionOf(order, "ORDER_PLACED", order.escrow, { wallet: -order.escrow, feesCollected: 0, marketNet: 0, shares: 0, sharesReserved: 0 }, now)
  }
  const free = funds.kind === "units" ? funds.free : 0
  if (free < order.quantity) return fail("INSUFFICIENT_HOLDINGS", `the account holds ${free} free units of ${order.symbol}`)
  return transitionOf(order, "ORDER_PLACED", 0, { wallet: 0, feesCollected: 0, marketNet: 0, shares: 0, sharesReserved: order.quantity }, now)
}

/** The planted defect fee-rounding (TEST ONLY, E-190): the base fee rounded up to the next cent, and the total and escrow with it. */
export const feeRoundedUp = (order: OrderRecord): OrderRecord => {
  const baseFee = Number((BigInt(order.gross) * BigInt(BASE_FEE_BPS) + 9_999n) / 10_000n)
  const fee = baseFee + order.partnerMarkupFee
  const totalAmount = order.side === "BUY" ? order.gross + fee : order.gross - fee
  return { ...order, baseFee, fee, totalAmount, escrow: order.side === "BUY" ? totalAmount : 0 }
}

export interface MarketOrderState<Q extends QuoteRecord> extends AccountState {
  readonly quote: Q | undefined
  /** The quote's listing symbol now (a quote issued before a symbol change binds the listing: D-343). */
  readonly quoteSymbolNow: string
  readonly listingStatus: Instrument["listingStatus"]
  readonly exchange: Exchange | undefined
}

export interface MarketOrderCommand {
  readonly placer: Placer
  readonly input: TradeInput
  readonly fields: MarketFields
  readonly instrument: Instrument
  /** TEST ONLY (sim/defects.ts, E-190): the planted defects quote-ttl and fee-rounding. */
  readonly planted?: { readonly quoteTtl: boolean; readonly feeRounding: boolean } | undefined
}

/** A MARKET order the engine accepts: its quote, its units and the externalId it carries; its escrow is still to check. */
export interface AcceptedMarketOrder<Q extends QuoteRecord> {
  readonly quote: Q
  readonly quantity: number
  readonly externalId: string | null
}

/**
 * Whether a MARKET order may trade, in the order the spec's refusals are checked: the account (FORBIDDEN,
 * KYC_REQUIRED), the quote (decide-quote.ts), the exchange's session (MARKET_CLOSED), a symbol changed meanwhile
 * (NOT_FOUND), the listing's status (MARKET_CLOSED: a listing that does not trade, D-301), a cashValue that buys nothing.
 */
export const acceptMarketOrder = <Q extends QuoteRecord>(
  state: MarketOrderState<Q>,
  command: MarketOrderCommand,
  now: number
): AcceptedMarketOrder<Q> | ApiFailure => {
  const { placer, input, fields, instrument } = command
  const externalId = tradingExternalId(state.subAccount)
  if (externalId instanceof ApiFailure) return externalId
  const use = { ...fields, partition: placer.partition, account: placer.account, symbol: instrument.symbol, side: input.type }
  const quote = acceptQuote(state.quote, state.quoteSymbolNow, use, now, command.planted?.quoteTtl === true)
  if (quote instanceof ApiFailure) return quote
  if (state.exchange !== undefined && !isOpen(state.exchange, now)) {
    return fail("MARKET_CLOSED", `${state.exchange.code} is closed at ${new Date(now).toISOString()}`)
  }
  const renamed = renamedMeanwhile(input.symbol, instrument, state.committedSymbol)
  if (renamed !== undefined) return renamed
  if (state.listingStatus !== "ACTIVE") return fail("MARKET_CLOSED", `${instrument.symbol} is ${state.listingStatus.toLowerCase()}: it takes no orders`)
  const quantity = orderQuantity(quote, use, placer.markupBps)
  if (quantity <= 0) return fail("VALIDATION_ERROR", "cashValue does not buy a single unit at the quoted price", { param: "cashValue" })
  return { quote, quantity, externalId }
}

/**
 * An accepted MARKET order placed at its quote's price and rate: PENDING at the desk, its escrow taken, its quote
 * used (and the quote's expiry job gone with it, E-295), `order.pending` announced.
 */
export const decideMarketOrder = <Q extends QuoteRecord>(
  accepted: AcceptedMarketOrder<Q>,
  command: MarketOrderCommand,
  exchange: Exchange | undefined,
  funds: Funds,
  now: number,
  ids: { readonly orderId: string }
): OrderPlan<Q> | ApiFailure => {
  const { placer, input, instrument } = command
  const { quote } = accepted
  const placed = placeMarket({
    orderId: ids.orderId,
    partition: placer.partition,
    account: placer.account,
    externalId: accepted.externalId,
    instrument,
    side: input.type,
    quantity: accepted.quantity,
    price: quote.price,
    rate: quote.rate,
    rateAsOf: quote.issuedAt,
    fxSource: FX_SOURCE,
    localCurrency: exchange?.currency ?? "USD",
    markupBps: placer.markupBps,
    quote: { quoteId: quote.quoteId, expiresAt: quote.expiresAt },
    clientOrderId: input.clientOrderId ?? null,
    // MARKET orders ignore timeInForce: the Order shows null (D-031)
    timeInForce: null,
    now
  })
  const order = command.planted?.feeRounding === true ? feeRoundedUp(placed) : placed
  const hold = placementHold(order, funds, now)
  if (hold instanceof ApiFailure) return hold
  return {
    ledger: hold,
    usedQuote: { quote: usedQuote(quote), expiryJob: quote.expiryJob },
    order,
    jobs: [],
    events: [pendingEvent(order)],
    toDesk: order,
    answer: orderToWire(order, now)
  }
}

/** Whether a resting order's account may trade and its symbol still names its listing; the externalId it carries. */
export const acceptRestingOrder = (state: AccountState, asked: string, instrument: Instrument): string | null | ApiFailure => {
  const externalId = tradingExternalId(state.subAccount)
  if (externalId instanceof ApiFailure) return externalId
  return renamedMeanwhile(asked, instrument, state.committedSymbol) ?? externalId
}

export interface RestingOrderCommand {
  readonly placer: Placer
  readonly input: TradeInput
  readonly orderType: RestingType
  readonly fields: RestingFields
  readonly instrument: Instrument
  readonly localCurrency: string
  readonly rate: Rate6
  /** When it expires (DAY: the exchange's close, D-281; GTD: expiresAt; GTC: null). */
  readonly deadline: number | null
  /** The next refresh after now: the trigger's first look at the delayed price. */
  readonly firstLook: number
}

/**
 * A resting order (D-280): WORKING, BUY escrow at its reference price (E-160) or SELL units reserved, its trigger job
 * at the next refresh and, with a deadline, its expiry job.
 */
export const decideRestingOrder = (
  command: RestingOrderCommand,
  externalId: string | null,
  funds: Funds,
  now: number,
  ids: { readonly orderId: string }
): OrderPlan | ApiFailure => {
  const { placer, fields, deadline } = command
  const order = placeResting({
    orderId: ids.orderId,
    partition: placer.partition,
    account: placer.account,
    externalId,
    instrument: command.instrument,
    orderType: command.orderType,
    side: command.input.type,
    quantity: fields.quantity,
    limitPrice: fields.limitPrice,
    stopPrice: fields.stopPrice,
    timeInForce: fields.timeInForce,
    expiresAt: fields.expiresAt,
    deadline,
    rate: command.rate,
    rateAsOf: fxAsOf(now),
    fxSource: FX_SOURCE,
    localCurrency: command.localCurrency,
    markupBps: placer.markupBps,
    clientOrderId: command.input.clientOrderId ?? null,
    now
  })
  const hold = placementHold(order, funds, now)
  if (hold instanceof ApiFailure) return hold
  const jobs: Array<OrderJob> = [{ kind: TRIGGER_JOB, dueAt: command.firstLook, payload: { orderId: order.orderId } }]
  if (deadline !== null) jobs.push({ kind: EXPIRE_JOB, dueAt: deadline, payload: { orderId: order.orderId, deadline } })
  return { ledger: hold, order, jobs, events: [], answer: orderToWire(order, now) }
}

/** A resting order's currency, FX rate (SERVICE_UNAVAILABLE without one) and deadline (DAY: the exchange's close, D-281). */
export const restingTerms = (fields: RestingFields, exchange: Exchange | undefined, now: number) => {
  const localCurrency = exchange?.currency ?? "USD"
  const rate = rateFor(localCurrency)
  if (rate === undefined) return fail("SERVICE_UNAVAILABLE", `no FX rate for ${localCurrency}`)
  const deadline = fields.timeInForce === "DAY" ? dayDeadline(exchange, now) : fields.expiresAt
  return { localCurrency, rate, deadline }
}
