/**
 * Wallet routes (contract tag "Wallets") and the sandbox reset: the master wallet, deposits, withdrawals, a
 * sub-account's transactions, and `POST /reset` at the sandbox root. Decoding only; WalletService and
 * SandboxService do the work. The transactions query answers every bad value with VALIDATION_ERROR (spec:
 * "returning 400 VALIDATION_ERROR for invalid input"), a non-number limit included.
 */
import { Schema } from "effect"
import { SandboxService } from "../../app/sandbox/service.ts"
import { WalletService } from "../../app/wallets/service.ts"
import { ApiFailure, fail } from "../../domain/errors.ts"
import { TRANSACTION_TYPES } from "../../domain/ledger.ts"
import { MAX_CASH_VALUE } from "../../domain/order.ts"
import { bound, type Decoder, integer, oneOf, optional, text } from "../query.ts"
import { partnerRoute } from "../route.ts"
import { userParam } from "./accounts.ts"
import { maxCharacters } from "../body.ts"

const positive = Schema.Number.check(Schema.isGreaterThan(0))

/** The contract's WalletTransferRequest; amounts beyond the engine's exact range (E-020) are refused. */
export const TransferBody = Schema.Struct({
  amount: Schema.Number.check(Schema.isGreaterThan(0), Schema.isLessThanOrEqualTo(MAX_CASH_VALUE)),
  localAmount: Schema.optionalKey(positive.check(Schema.isLessThanOrEqualTo(1e11))),
  localCurrency: Schema.optionalKey(Schema.String.check(Schema.isPattern(/^[A-Z]{3}$/))),
  fxRate: Schema.optionalKey(positive.check(Schema.isLessThanOrEqualTo(1e6))),
  note: Schema.optionalKey(Schema.String.check(maxCharacters(500))),
  reference: Schema.optionalKey(Schema.String.check(maxCharacters(200)))
})

/** Any refusal of `decode` as VALIDATION_ERROR, keeping its message and `param`. */
export const asValidation =
  <A>(decode: Decoder<A>): Decoder<A> =>
  (raw, name) => {
    const value = decode(raw, name)
    return value instanceof ApiFailure ? fail("VALIDATION_ERROR", value.message, { param: name }) : value
  }

export const walletRoutes = [
  partnerRoute("getMasterWallet", 200, {
    handle: ({ principal }) => WalletService.use((w) => w.master(principal))
  }),
  partnerRoute("depositToSubAccount", 200, {
    params: userParam,
    body: TransferBody,
    handle: ({ params, body, principal }) => WalletService.use((w) => w.deposit(principal, params.userId, body))
  }),
  partnerRoute("withdrawFromSubAccount", 200, {
    params: userParam,
    body: TransferBody,
    handle: ({ params, body, principal }) => WalletService.use((w) => w.withdraw(principal, params.userId, body))
  }),
  partnerRoute("listSubAccountTransactions", 200, {
    params: userParam,
    query: {
      from: optional(bound("from")),
      to: optional(bound("to")),
      limit: optional(asValidation(integer({ min: 1, max: 200 }))),
      cursor: optional(text),
      type: optional(oneOf(TRANSACTION_TYPES))
    },
    handle: ({ params, query, principal }) => WalletService.use((w) => w.transactions(principal, params.userId, query))
  }),
  partnerRoute("resetSandbox", 200, {
    handle: ({ principal }) => SandboxService.use((s) => s.reset(principal))
  })
]
