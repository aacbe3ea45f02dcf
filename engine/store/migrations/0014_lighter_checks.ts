/**
 * The ledger's commit-time checks at a lower cost per write (E-341), measured on the money path: each check is one
 * statement, not a function per question; an entry is checked from its postings only (an entry with no posting moves
 * no money, and the ledger never writes one); and two indexes that every write paid for and only hand-run queries used
 * go (orders by status, events by partition range: a partition wipe is rare and scans).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`DROP INDEX orders_partner_status_idx`
  yield* sql`DROP INDEX events_partition_idx`
  yield* sql`DROP TRIGGER ledger_entry_balances ON ledger_entries`
  yield* sql`DROP FUNCTION sokoni_ledger_check_entry_row()`
  yield* sql.unsafe(`CREATE OR REPLACE FUNCTION sokoni_ledger_check_balance_row() RETURNS trigger LANGUAGE plpgsql AS $fn$
    DECLARE p text; a text; held bigint; posted bigint;
    BEGIN
      IF TG_OP = 'DELETE' THEN p := OLD.partition; a := OLD.account; ELSE p := NEW.partition; a := NEW.account; END IF;
      SELECT (SELECT cents FROM ledger_balances WHERE partition = p AND account = a),
             (SELECT balance_after FROM ledger_postings WHERE partition = p AND account = a ORDER BY seq DESC LIMIT 1)
        INTO held, posted;
      IF COALESCE(held, 0) <> COALESCE(posted, 0) THEN
        RAISE EXCEPTION 'ledger: % in % holds % cents but its postings sum to %', a, p, COALESCE(held, 0), COALESCE(posted, 0)
          USING ERRCODE = 'check_violation', CONSTRAINT = 'ledger_balance_is_sum_of_postings';
      END IF;
      RETURN NULL;
    END $fn$`)
  // A deleted posting: its account summed in full (the running balances no longer vouch), its entry as it is left.
  yield* sql.unsafe(`CREATE OR REPLACE FUNCTION sokoni_ledger_check_posting_row() RETURNS trigger LANGUAGE plpgsql AS $fn$
    DECLARE r record; held bigint; posted bigint; total numeric;
    BEGIN
      IF TG_OP = 'DELETE' THEN r := OLD; ELSE r := NEW; END IF;
      SELECT (SELECT cents FROM ledger_balances WHERE partition = r.partition AND account = r.account),
             CASE WHEN TG_OP = 'DELETE'
               THEN (SELECT sum(cents) FROM ledger_postings WHERE partition = r.partition AND account = r.account)
               ELSE (SELECT balance_after FROM ledger_postings WHERE partition = r.partition AND account = r.account ORDER BY seq DESC LIMIT 1)
             END,
             (SELECT sum(cents) FROM ledger_postings WHERE entry_id = r.entry_id)
        INTO held, posted, total;
      IF COALESCE(held, 0) <> COALESCE(posted, 0) THEN
        RAISE EXCEPTION 'ledger: % in % holds % cents but its postings sum to %', r.account, r.partition, COALESCE(held, 0), COALESCE(posted, 0)
          USING ERRCODE = 'check_violation', CONSTRAINT = 'ledger_balance_is_sum_of_postings';
      END IF;
      IF COALESCE(total, 0) <> 0 THEN
        RAISE EXCEPTION 'ledger: entry % has postings summing to % cents, not zero', r.entry_id, total
          USING ERRCODE = 'check_violation', CONSTRAINT = 'ledger_entry_balances';
      END IF;
      RETURN NULL;
    END $fn$`)
})
