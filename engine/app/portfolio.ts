/**
 * PortfolioService: an account's cash and positions valued at the delayed price (D-027): `GET /portfolio` (master)
 * and `GET /users/{userId}/portfolio`. Owns the valuation: market value, average cost and unrealised P&L, in exact
 * integer arithmetic. Does not own balances or holdings (app/ledger.ts keeps them with the journal), nor prices
 * (the published stock item, app/market.ts).
 */
import { Context, Effect, Layer } from "effect"
import type { Schemas } from "../contract/wire.ts"
import type { ApiFailure } from "../domain/errors.ts"
import { scaleUnits } from "../domain/corporate.ts"
import type { ActionRecord } from "../domain/reference/corporate-actions.ts"
import { centsToWire, divRound, parseScaled, toWireNumber } from "../domain/money.ts"
import type { Fill, OrderRecord } from "../domain/order.ts"
import { EngineClock, isoAt } from "../sim/clock.ts"
import { type ReadTx, Store, type StoreError } from "../store/port.ts"
import { findSubAccount } from "./accounts.ts"
import { Orders, SimActions } from "./docs.ts"
import { holdingsOf, reservedBalance, walletBalance } from "./ledger.ts"
import { MarketService } from "./market.ts"
import { allottedAsBuys } from "./corporate-actions/rights.ts"
import { Symbols } from "./symbols.ts"
import type { Principal } from "./principal.ts"

/**
 * USD cost of the units an account bought, per symbol: every BUY fill's gross plus fee, and the units, as the
 * rational `units / per` (`per` is 1 unless a split, reverse split or bonus issue rescaled the units, D-303).
 */
export interface CostBasis {
  readonly cents: number
  readonly units: number
  readonly per?: number
}

/** What a basis is built from: an order's BUY fills (or units a rights issue allotted at their subscription cost). */
export type BasisSource = Pick<OrderRecord, "account" | "side" | "symbol"> & {
  readonly fills: ReadonlyArray<Pick<Fill, "quantity" | "gross" | "fee" | "at" | "seq">>
}

/** A split, reverse split or bonus issue of `symbol` processed at `at`: `ratioFrom` old units became `ratioTo`. */
export interface UnitAdjustment {
  readonly symbol: string
  readonly at: number
  readonly ratioFrom: number
  readonly ratioTo: number
  /** Its place among unit changes in commit order (ActionRecord.seq); absent on older records. */
  readonly seq?: number
}

/** A basis, with `per` only when units were rescaled (a basis never split reads as before). */
const withPer = (cents: number, units: number, per: number): CostBasis => (per === 1 ? { cents, units } : { cents, units, per })

/** The unit adjustments among actions: completed splits, reverse splits and bonus issues. */
export const unitAdjustmentsOf = (actions: ReadonlyArray<ActionRecord>): ReadonlyArray<UnitAdjustment> =>
  actions.flatMap((a) =>
    (a.actionType === "SPLIT" || a.actionType === "REVERSE_SPLIT" || a.actionType === "BONUS") && a.completedAt !== null
      ? [
          {
            symbol: a.symbol,
            at: a.completedAt,
            ratioFrom: Number(a.details.ratioFrom),
            ratioTo: Number(a.details.ratioTo),
            ...(a.seq === undefined ? {} : { seq: a.seq })
          }
        ]
      : []
  )

interface UnitStep {
  readonly at: number
  readonly seq: number | undefined
  readonly symbol: string
  readonly fill?: { readonly cents: number; readonly units: number }
  readonly adjust?: UnitAdjustment
}

/**
 * Time first; within one instant the commit order when both steps carry it, else (records from before it was kept)
 * fills before adjustments, as the engine clock then most often meant.
 */
export const unitOrder = (x: UnitStep, y: UnitStep): number => {
  if (x.at !== y.at) return x.at - y.at
  if (x.seq !== undefined && y.seq !== undefined) return x.seq - y.seq
  return (x.adjust === undefined ? 0 : 1) - (y.adjust === undefined ? 0 : 1)
}

/**
 * Average-cost basis from the account's BUY fills (sells leave the average unchanged); the units bought before an
 * adjustment are rescaled by it, the cost is not, so the average cost follows the split exactly. Pure.
 */
export const costBasisOf = (
  orders: ReadonlyArray<BasisSource>,
  account: string,
  adjustments: ReadonlyArray<UnitAdjustment> = []
): ReadonlyMap<string, CostBasis> => {
  const steps: Array<UnitStep> = []
  for (const o of orders) {
    if (o.account !== account || o.side !== "BUY") continue
    for (const f of o.fills) steps.push({ at: f.at, seq: f.seq, symbol: o.symbol, fill: { cents: f.gross + f.fee, units: f.quantity } })
  }
  // An adjustment applies to what was bought before it: in time, then, within one instant, in commit order.
  if (adjustments.length > 0) {
    for (const a of adjustments) steps.push({ at: a.at, seq: a.seq, symbol: a.symbol, adjust: a })
    steps.sort(unitOrder)
  }
  const basis = new Map<string, CostBasis>()
  for (const step of steps) {
    const prior = basis.get(step.symbol)
    if (step.fill !== undefined) {
      const per = prior?.per ?? 1
      basis.set(step.symbol, withPer((prior?.cents ?? 0) + step.fill.cents, (prior?.units ?? 0) + step.fill.units * per, per))
    } else if (step.adjust !== undefined && prior !== undefined) {
      const scaled = scaleUnits(prior.units, prior.per ?? 1, step.adjust.ratioFrom, step.adjust.ratioTo)
      basis.set(step.symbol, withPer(prior.cents, scaled.units, scaled.per))
    }
  }
  return basis
}

/**
 * One position valued: market value = quantity x USD price (to the cent), average cost = basis / units bought (to
 * 1/10000 USD), unrealised P&L = market value - quantity x average cost (to the cent). Pure.
 */
export const valuePosition = (
  quantity: number,
  usdPrice: number | null,
  basis: CostBasis | undefined
): { readonly marketValueCents: number | null; readonly averageCost4: number | null; readonly unrealizedCents: number | null } => {
  const usd4 = usdPrice === null ? undefined : parseScaled(usdPrice, 4)
  const marketValueCents = usd4 === undefined ? null : Number(divRound(BigInt(quantity) * BigInt(usd4), 100n))
  const averageCost4 =
    basis === undefined || basis.units === 0 ? null : Number(divRound(BigInt(basis.cents) * 100n * BigInt(basis.per ?? 1), BigInt(basis.units)))
  const unrealizedCents =
    marketValueCents === null || averageCost4 === null ? null : marketValueCents - Number(divRound(BigInt(quantity) * BigInt(averageCost4), 100n))
  return { marketValueCents, averageCost4, unrealizedCents }
}

export class PortfolioService extends Context.Service<
  PortfolioService,
  { readonly portfolio: (principal: Principal, account: string) => Effect.Effect<Schemas["Portfolio"], ApiFailure | StoreError> }
>()("sokoni/PortfolioService") {
  static readonly make = Effect.gen(function* () {
    const store = yield* Store
    const clock = yield* EngineClock
    const market = yield* MarketService
    const symbols = yield* Symbols

    const read = (tx: ReadTx, partition: string, account: string) =>
      Effect.gen(function* () {
        const subAccount = account === "master" ? undefined : yield* findSubAccount(tx, partition, account)
        const cash = yield* walletBalance(tx, partition, account)
        const reserved = yield* reservedBalance(tx, partition, account)
        const holdings = (yield* holdingsOf(tx, partition, account)).filter((h) => h.quantity > 0)
        const orders = holdings.length === 0 ? [] : yield* Orders.list(tx, partition, { limit: 100_000, order: "asc" })
        // Splits, reverse splits and bonus issues raised through the control API rescale the units bought (D-303).
        const actions = holdings.length === 0 ? [] : yield* SimActions.list(tx, "global", { limit: 100_000, order: "asc" })
        // Fills and splits recorded under a listing's former symbol count towards the holding it has now (D-342).
        const bought: ReadonlyArray<BasisSource> = holdings.length === 0 ? [] : [...orders, ...(yield* allottedAsBuys(tx, partition, account))]
        const underCurrent = bought.map((o) => ({ ...o, symbol: symbols.currentSymbol(o.symbol) }))
        const adjustments = unitAdjustmentsOf(actions).map((a) => ({ ...a, symbol: symbols.currentSymbol(a.symbol) }))
        return { subAccount, cash, reserved, holdings, basis: costBasisOf(underCurrent, account, adjustments) }
      })

    const portfolio = Effect.fn("PortfolioService.portfolio")(function* (principal: Principal, account: string) {
      const state = yield* store.read((tx) => read(tx, principal.partition, account))
      const now = yield* clock.nowHere()
      const positions: Array<Schemas["Holding"]> = []
      let totalCents = 0
      for (const h of state.holdings) {
        // Holdings come only from fills of catalogue listings; the fallbacks below keep a position readable should a
        // listing ever leave the catalogue, rather than dropping it from the answer.
        const instrument = symbols.listingOf(h.symbol)
        const item = instrument === undefined ? undefined : yield* market.stockItem(instrument)
        const usdPrice = item?.usdPrice ?? null
        const value = valuePosition(h.quantity, usdPrice, state.basis.get(h.symbol))
        totalCents += value.marketValueCents ?? 0
        positions.push({
          symbol: h.symbol,
          exchange: (instrument?.exchange ?? "NSE") as Schemas["Holding"]["exchange"],
          name: instrument?.name ?? h.symbol,
          currency: item?.currency ?? "USD",
          quantity: h.quantity,
          availableQuantity: h.quantity - h.reserved,
          averageCostUsd: value.averageCost4 === null ? null : toWireNumber(value.averageCost4, 4),
          lastPrice: item?.price ?? null,
          usdPrice,
          marketValueUsd: value.marketValueCents === null ? null : centsToWire(value.marketValueCents),
          unrealizedPnlUsd: value.unrealizedCents === null ? null : centsToWire(value.unrealizedCents),
          asOf: item?.asOf ?? null
        })
      }
      const answer: Schemas["Portfolio"] = {
        accountType: account === "master" ? "MASTER" : "SUB_ACCOUNT",
        subAccountId: state.subAccount === undefined ? null : account,
        externalId: state.subAccount?.externalId ?? null,
        cashBalance: centsToWire(state.cash),
        reservedCash: centsToWire(state.reserved),
        holdings: positions,
        totalMarketValueUsd: centsToWire(totalCents),
        asOf: isoAt(now)
      }
      return answer
    })

    return PortfolioService.of({ portfolio })
  })

  static readonly layer = Layer.effect(PortfolioService, PortfolioService.make)
}
