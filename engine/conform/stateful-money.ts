/**
 * The money check of `sokoni conform`: a BUY moves exactly gross + fee through escrow and out at the fill, against the
 * fee rule recomputed independently of the engine. Owns the oracle; the shared pieces are stateful-kit.ts.
 */
import {
  BASE_FEE_BPS,
  baseFeeCents,
  caller,
  cents,
  codeOf,
  fundedSubAccount,
  holdingOf,
  partnerFor,
  quoteOf,
  type StatefulCheck,
  SYMBOL,
  Verdict,
  walletOf,
  tradingCaller
} from "./stateful-kit.ts"
import type { Exchange } from "./target.ts"

/**
 * money-invariants: a BUY through quote, trade and fill, against the fee rule recomputed here. The quote's fee is
 * 0.75 % of its gross (rounded half away from zero; a quantity is chosen whose fee is not a whole cent, so a rounding
 * error shows), the order's fee parts add up, its total is the quote's, the wallet moves the total from available to
 * reserved (balance unchanged) at acceptance and out of the balance at the fill, and the holding grows by the quantity.
 */
export const moneyInvariants: StatefulCheck = {
  id: "money-invariants",
  suite: "stateful: money",
  operation: "placeTrade",
  name: "money-invariants: a BUY moves exactly gross + fee (0.75 %, half away from zero) from available to escrow, then out at the fill; nothing is created or lost",
  run: async (ctx) => {
    const v = new Verdict(ctx)
    const trading = await tradingCaller(ctx, v)
    if ("skip" in trading) return v.skip(trading.skip)
    const { call } = trading
    const w0 = walletOf(await call("GET", "/wallet"))
    const h0 = await holdingOf(call)
    // Find a quantity whose fee has a fraction of a cent below one half: rounding it up is then off by a cent.
    let q: Exchange | undefined
    let quantity = 0
    for (const n of [997, 1009, 1013, 1019, 1021, 1031, 1033, 1039]) {
      const x = await call("GET", `/quote/${SYMBOL}?side=BUY&quantity=${n}`)
      const g = cents(quoteOf(x).estimatedGross)
      if (x.status !== 200) return v.fail(`GET /quote answered ${x.status}`)
      q = x
      quantity = n
      const rest = (g * BASE_FEE_BPS) % 10_000
      if (rest > 0 && rest < 5_000) break
    }
    if (q === undefined) return v.fail("no quote")
    const quote = quoteOf(q)
    const gross = cents(quote.estimatedGross)
    const fee = cents(quote.estimatedFee)
    const total = cents(quote.estimatedTotal)
    if (total !== gross + fee)
      return v.fail(`quote: estimatedTotal ${quote.estimatedTotal} is not estimatedGross ${quote.estimatedGross} + estimatedFee ${quote.estimatedFee}`, q)
    const t = await call("POST", "/trade", { symbol: SYMBOL, type: "BUY", quantity, quoteId: quote.quoteId })
    if (t.status !== 202) return v.fail(`the trade was answered ${t.status} ${codeOf(t) ?? ""}; expected 202`)
    const order = t.json as { orderId: string; fee?: number; baseFee?: number; partnerMarkupFee?: number; totalAmount?: number }
    const expectedBase = baseFeeCents(gross)
    if (cents(order.baseFee) !== expectedBase)
      return v.fail(`order baseFee ${order.baseFee} for a gross of ${gross / 100}: the fee rule (0.75 %, half away from zero) gives ${expectedBase / 100}`, t)
    if (cents(order.fee) !== cents(order.baseFee) + cents(order.partnerMarkupFee)) return v.fail(`order fee ${order.fee} is not baseFee + partnerMarkupFee`, t)
    if (cents(order.totalAmount) !== gross + cents(order.fee))
      return v.fail(`order totalAmount ${order.totalAmount} is not gross ${gross / 100} + fee ${order.fee}`, t)
    if (cents(order.fee) !== fee) return v.fail(`order fee ${order.fee} differs from the quote's estimatedFee ${quote.estimatedFee}`, t)
    const w1x = await call("GET", "/wallet")
    const w1 = walletOf(w1x)
    const paid = cents(order.totalAmount)
    if (w1.balance !== w0.balance || w1.available !== w0.available - paid || w1.reserved !== w0.reserved + paid)
      return v.fail(
        `after acceptance the wallet is balance ${w1.balance / 100}, available ${w1.available / 100}, reserved ${w1.reserved / 100}; expected ${w0.balance / 100}, ${(w0.available - paid) / 100}, ${(w0.reserved + paid) / 100} (total ${paid / 100} into escrow)`,
        w1x
      )
    if (!ctx.target.hasControl) return v.pass("checked up to acceptance; the fill needs the control API's desk")
    const fill = v.keep(await ctx.target.admin("POST", `/_sim/desk/orders/${order.orderId}/fill`, {}))
    if (fill.status !== 200) await ctx.target.wait(30_000, `the target's own desk to fill order ${order.orderId}`)
    const w2x = await call("GET", "/wallet")
    const w2 = walletOf(w2x)
    if (w2.balance !== w0.balance - paid || w2.reserved !== w0.reserved || w2.available !== w0.available - paid)
      return v.fail(
        `after the fill the wallet is balance ${w2.balance / 100}, available ${w2.available / 100}, reserved ${w2.reserved / 100}; expected ${(w0.balance - paid) / 100}, ${(w0.available - paid) / 100}, ${w0.reserved / 100}`,
        w2x
      )
    const h1 = await holdingOf(call)
    if (h1 !== h0 + quantity) return v.fail(`the holding of ${SYMBOL} is ${h1} after buying ${quantity}; expected ${h0 + quantity}`)
    return v.pass()
  }
}

/**
 * overdraw-refused: a withdrawal larger than a sub-account's balance is refused with 400 INSUFFICIENT_FUNDS, and
 * nothing moves: the sub-account keeps its balance, the master wallet its, and no transaction is listed for it. Runs on
 * a sub-account of its own (25.00 in it, 50.00 asked), so a live target needs no market and no control API.
 */
export const overdrawRefused: StatefulCheck = {
  id: "overdraw-refused",
  suite: "stateful: money",
  operation: "withdrawFromSubAccount",
  name: "overdraw-refused: a withdrawal larger than the sub-account's balance is refused with 400 INSUFFICIENT_FUNDS and moves nothing",
  run: async (ctx) => {
    const v = new Verdict(ctx)
    const { key, call } = caller(ctx, v, await partnerFor(ctx))
    if (key === undefined) return v.skip("needs a sandbox key or --admin-token")
    const funded = await fundedSubAccount(ctx, call, "overdraw", 25)
    if ("problem" in funded) return v.fail(funded.problem)
    const id = funded.id
    const master0 = walletOf(await call("GET", "/wallet"))
    const asked = await call("POST", `/users/${id}/withdraw`, { amount: 50, reference: "conform-overdraw" })
    const newBalance = (asked.json as { newBalance?: unknown } | null)?.newBalance
    if (asked.status !== 400 || codeOf(asked) !== "INSUFFICIENT_FUNDS")
      return v.fail(
        `withdrawing 50.00 from sub-account ${id}, which holds 25.00, was answered ${asked.status}${codeOf(asked) === undefined ? "" : ` ${codeOf(asked)}`}${typeof newBalance === "number" ? ` (newBalance ${newBalance})` : ""}; expected 400 INSUFFICIENT_FUNDS`,
        asked
      )
    const account = await call("GET", `/users/${id}`)
    const held = cents((account.json as { walletBalance?: unknown } | null)?.walletBalance)
    if (held !== 2_500) return v.fail(`sub-account ${id} holds ${held / 100} after a refused withdrawal; expected 25 (nothing moved)`, account)
    const master1x = await call("GET", "/wallet")
    if (walletOf(master1x).balance !== master0.balance)
      return v.fail(
        `the master wallet went from ${master0.balance / 100} to ${walletOf(master1x).balance / 100} on a refused withdrawal; expected no change`,
        master1x
      )
    const listed = await call("GET", `/users/${id}/transactions`)
    const rows = (listed.json as { transactions?: Array<{ type?: string }> } | null)?.transactions ?? []
    const withdrawals = rows.filter((r) => r.type === "WITHDRAWAL")
    if (listed.status !== 200 || withdrawals.length > 0)
      return v.fail(
        `sub-account ${id} lists ${withdrawals.length} withdrawals after a refused one (GET /users/${id}/transactions answered ${listed.status}); expected none`,
        listed
      )
    return v.pass()
  }
}
