/**
 * The ledger's balances (collection "balances", one row per ledger account of a partition) in a table of their own,
 * in USD cents. The database refuses a negative balance of money someone holds (a wallet, an escrow), as
 * domain/ledger.ts `mustStayNonNegative` says; equity and market accounts go negative by design.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { addCheck, GENERIC_COLUMNS, listIndex, moveRows } from "./typed-table.ts"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`CREATE TABLE ledger_balances (${GENERIC_COLUMNS},
    account text NOT NULL,
    cents bigint NOT NULL,
    updated_at bigint
  )`)
  yield* listIndex("ledger_balances")
  yield* moveRows("balances", "ledger_balances", {
    account: "sokoni_json_text(b, 'account')",
    cents: "sokoni_json_int(b, 'cents')",
    updated_at: "sokoni_json_int(b, 'updatedAt')"
  })
  yield* sql.unsafe(`ALTER TABLE ledger_balances ADD CONSTRAINT ledger_balances_account_key UNIQUE (partition, account)`)
  yield* addCheck(
    "ledger_balances",
    "ledger_balances_held_money_not_negative",
    "cents >= 0 OR NOT (starts_with(account, 'wallet:') OR starts_with(account, 'escrow:'))"
  )
})
