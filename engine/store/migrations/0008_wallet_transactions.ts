/** A sub-account's (or master's) wallet history rows (collection "walletTxns") in a table of their own, in USD cents. */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { addCheck, GENERIC_COLUMNS, listIndex, moveRows } from "./typed-table.ts"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`CREATE TABLE wallet_transactions (${GENERIC_COLUMNS},
    transaction_id text,
    sub_account_id text,
    type text,
    cents bigint,
    balance_after bigint,
    order_id text,
    at bigint,
    seq bigint
  )`)
  yield* listIndex("wallet_transactions")
  yield* moveRows("walletTxns", "wallet_transactions", {
    transaction_id: "sokoni_json_text(b, 'transactionId')",
    sub_account_id: "sokoni_json_text(b, 'subAccountId')",
    type: "sokoni_json_text(b, 'type')",
    cents: "sokoni_json_int(b, 'cents')",
    balance_after: "sokoni_json_int(b, 'balanceAfter')",
    order_id: "sokoni_json_text(b, 'orderId')",
    at: "sokoni_json_int(b, 'at')",
    seq: "sokoni_json_int(b, 'seq')"
  })
  // A wallet's history never shows it below zero (the balances' own check, seen from the history).
  yield* addCheck("wallet_transactions", "wallet_transactions_balance_not_negative", "balance_after >= 0")
})
