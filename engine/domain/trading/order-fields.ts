/**
 * The fields of an order request that no JSON Schema can check: one of quantity or cashValue, the prices an order
 * type takes, a GTD deadline in the future and at most a year ahead (D-280, D-281, D-284), and when a DAY order
 * expires. Pure: every mistake is a 400 naming its parameter, before any state is read.
 * Owns: these checks. Does not own the contract's own checks (http/), nor what the order then does (decide-order.ts).
 */
import { type Exchange, isOpen, nextSessionAfter, sessionToday } from "../calendar.ts"
import { ApiFailure, fail } from "../errors.ts"
import { parseScaled } from "../money.ts"
import type { OrderRecord, RestingType } from "../order.ts"
import type { ReplaceRequest, TradeInput } from "./commands.ts"

/** Furthest GTD deadline accepted: 366 days (D-281). */
const MAX_GTD_MS = 366 * 86_400_000
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/

const badQuantity = (quantity: number) => !Number.isSafeInteger(quantity) || quantity <= 0

/** The checked fields of a MARKET order: its quote, and exactly one of quantity or cashValue (cents). */
export interface MarketFields {
  readonly quoteId: string
  readonly quantity: number | undefined
  readonly cashValue: number | undefined
}

/** A MARKET order's fields (D-031): quote-gated, one of quantity or cashValue. */
export const marketFields = (input: TradeInput): MarketFields | ApiFailure => {
  if (input.quoteId === undefined) return fail("QUOTE_REQUIRED", "a MARKET order needs a quoteId from GET /quote/{symbol}", { param: "quoteId" })
  if ((input.quantity === undefined) === (input.cashValue === undefined)) {
    return fail("VALIDATION_ERROR", "give exactly one of quantity or cashValue", { params: ["quantity", "cashValue"] })
  }
  if (input.quantity !== undefined && badQuantity(input.quantity)) {
    return fail("VALIDATION_ERROR", "quantity must be a whole number above 0", { param: "quantity" })
  }
  const cashValue = input.cashValue === undefined ? undefined : parseScaled(input.cashValue, 2)
  if (input.cashValue !== undefined && (cashValue === undefined || cashValue <= 0)) {
    return fail("VALIDATION_ERROR", "cashValue must be a positive USD amount with at most 2 decimals", { param: "cashValue" })
  }
  return { quoteId: input.quoteId, quantity: input.quantity, cashValue }
}

/** A GTD deadline: an RFC 3339 date-time with an offset, after `now`, at most a year ahead (D-281). */
const gtdDeadline = (raw: string | undefined, now: number): number | ApiFailure => {
  if (raw === undefined) return fail("VALIDATION_ERROR", "a GTD order needs expiresAt", { param: "expiresAt" })
  const at = DATE_TIME.test(raw) ? Date.parse(raw) : Number.NaN
  if (!Number.isFinite(at)) return fail("VALIDATION_ERROR", "expiresAt must be an ISO 8601 date-time with a time zone", { param: "expiresAt" })
  if (at <= now) return fail("VALIDATION_ERROR", "expiresAt must be in the future", { param: "expiresAt" })
  if (at > now + MAX_GTD_MS) return fail("VALIDATION_ERROR", "expiresAt must be at most 366 days ahead", { param: "expiresAt" })
  return at
}

/** A limit or stop price: positive, at most 4 decimals (local currency). */
const priceField = (value: number, param: "limitPrice" | "stopPrice"): number | ApiFailure => {
  const p = parseScaled(value, 4)
  return p === undefined || p <= 0 ? fail("VALIDATION_ERROR", `${param} must be positive with at most 4 decimals`, { param }) : p
}

/** Which of limitPrice and stopPrice an order type takes (contract TradeRequest). */
const takesLimit = (t: RestingType) => t === "LIMIT" || t === "STOP_LIMIT"
const takesStop = (t: RestingType) => t === "STOP" || t === "STOP_LIMIT"

const notFor = (orderType: RestingType, param: "limitPrice" | "stopPrice") => fail("VALIDATION_ERROR", `a ${orderType} order takes no ${param}`, { param })

const priceOf = (orderType: RestingType, param: "limitPrice" | "stopPrice", takes: boolean, value: number | undefined): number | null | ApiFailure => {
  if (!takes) return value === undefined ? null : notFor(orderType, param)
  if (value === undefined) return fail("VALIDATION_ERROR", `a ${orderType} order needs a ${param}`, { param })
  return priceField(value, param)
}

/** The validated fields of a resting order request (D-280): every mistake is a 400 naming its parameter. */
export const restingFields = (orderType: RestingType, input: TradeInput, now: number) => {
  if (input.quoteId !== undefined)
    return fail("VALIDATION_ERROR", `a ${orderType} order takes no quoteId (only MARKET orders are quote-gated)`, { param: "quoteId" })
  if (input.cashValue !== undefined) return fail("VALIDATION_ERROR", `a ${orderType} order takes a quantity, not a cashValue`, { param: "cashValue" })
  if (input.quantity === undefined) return fail("VALIDATION_ERROR", `a ${orderType} order needs a quantity`, { param: "quantity" })
  if (badQuantity(input.quantity)) return fail("VALIDATION_ERROR", "quantity must be a whole number above 0", { param: "quantity" })
  const limitPrice = priceOf(orderType, "limitPrice", takesLimit(orderType), input.limitPrice)
  if (limitPrice instanceof ApiFailure) return limitPrice
  const stopPrice = priceOf(orderType, "stopPrice", takesStop(orderType), input.stopPrice)
  if (stopPrice instanceof ApiFailure) return stopPrice
  const timeInForce = input.timeInForce ?? "DAY"
  if (timeInForce !== "GTD" && input.expiresAt !== undefined) {
    return fail("VALIDATION_ERROR", "expiresAt goes only with timeInForce GTD", { param: "expiresAt" })
  }
  const expiresAt = timeInForce === "GTD" ? gtdDeadline(input.expiresAt, now) : null
  if (expiresAt instanceof ApiFailure) return expiresAt
  return { quantity: input.quantity, limitPrice, stopPrice, timeInForce, expiresAt }
}

export type RestingFields = Exclude<ReturnType<typeof restingFields>, ApiFailure>

/** A changed GTD deadline: the one given, one required by a switch to GTD, none after a switch away from it. */
const replacedExpiry = (order: OrderRecord, input: ReplaceRequest, now: number): number | null | undefined | ApiFailure => {
  if (input.expiresAt !== undefined) return gtdDeadline(input.expiresAt, now)
  if (input.timeInForce === "GTD" && order.timeInForce !== "GTD") return gtdDeadline(undefined, now)
  if (input.timeInForce !== undefined && input.timeInForce !== "GTD") return null
  return undefined
}

/** The validated change of a replace (D-284): fields must fit the order's type; expiresAt only with GTD. */
export const replaceFields = (order: OrderRecord, input: ReplaceRequest, now: number) => {
  const orderType = order.orderType as RestingType
  if (Object.values(input).every((v) => v === undefined)) {
    return fail("VALIDATION_ERROR", "give at least one of quantity, limitPrice, stopPrice, timeInForce, expiresAt")
  }
  if (input.quantity !== undefined && badQuantity(input.quantity)) {
    return fail("VALIDATION_ERROR", "quantity must be a whole number above 0", { param: "quantity" })
  }
  const limitPrice =
    input.limitPrice === undefined ? undefined : takesLimit(orderType) ? priceField(input.limitPrice, "limitPrice") : notFor(orderType, "limitPrice")
  if (limitPrice instanceof ApiFailure) return limitPrice
  const stopPrice = input.stopPrice === undefined ? undefined : takesStop(orderType) ? priceField(input.stopPrice, "stopPrice") : notFor(orderType, "stopPrice")
  if (stopPrice instanceof ApiFailure) return stopPrice
  const timeInForce = input.timeInForce ?? order.timeInForce
  if (input.expiresAt !== undefined && timeInForce !== "GTD")
    return fail("VALIDATION_ERROR", "expiresAt goes only with timeInForce GTD", { param: "expiresAt" })
  const expiresAt = replacedExpiry(order, input, now)
  if (expiresAt instanceof ApiFailure) return expiresAt
  return { quantity: input.quantity, limitPrice, stopPrice, timeInForce: input.timeInForce, expiresAt }
}

/**
 * When a DAY order expires (D-281): the close of the session it was placed in, or, placed while the exchange is
 * closed (night, weekend, holiday), the close of the next session. No listing without an exchange trades here.
 */
export const dayDeadline = (exchange: Exchange | undefined, now: number): number | null => {
  if (exchange === undefined) return null
  if (isOpen(exchange, now)) return sessionToday(exchange, now)?.closesAt ?? null
  return nextSessionAfter(exchange, now)?.closesAt ?? null
}
