/**
 * The journal (collection "journal") in `ledger_entries`, each entry's postings in `ledger_postings`, and what the
 * database itself holds the ledger to (E-341):
 * - every entry's postings sum to zero (checked at commit: an entry and its postings may be written in any order);
 * - each posting carries the running balance of its account (`balance_after`), computed by the database from the
 *   account's previous posting, never taken from the writer; postings are never updated;
 * - at commit, every balance written (`ledger_balances`) equals the running balance of its account's last posting,
 *   and every account a posting moved has that balance: the balances are the sum of the entries.
 * The checks are constraint triggers DEFERRABLE INITIALLY DEFERRED: they run inside COMMIT, so the engine's writes
 * take no extra round trip, and each looks at one account's last posting (an index probe), not its whole history.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { GENERIC_COLUMNS, listIndex, moveRows } from "./typed-table.ts"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`CREATE TABLE ledger_entries (${GENERIC_COLUMNS},
    seq bigint NOT NULL,
    at bigint,
    kind text NOT NULL,
    order_id text,
    subscription_id text,
    side text,
    reference text,
    description text,
    CONSTRAINT ledger_entries_position_key UNIQUE (partition, seq)
  )`)
  yield* listIndex("ledger_entries")
  yield* sql.unsafe(`CREATE TABLE ledger_postings (
    entry_id text NOT NULL REFERENCES ledger_entries (id) ON DELETE CASCADE,
    partition text COLLATE "C" NOT NULL,
    seq bigint NOT NULL,
    account text NOT NULL,
    cents bigint NOT NULL,
    balance_after bigint NOT NULL,
    PRIMARY KEY (entry_id, account)
  )`)
  yield* sql.unsafe(`CREATE INDEX ledger_postings_account_idx ON ledger_postings (partition, account, seq)`)
  yield* moveRows("journal", "ledger_entries", {
    seq: "sokoni_json_int(b, 'seq')",
    at: "sokoni_json_int(b, 'at')",
    kind: "sokoni_json_text(b, 'kind')",
    order_id: "sokoni_json_text(b, 'orderId')",
    subscription_id: "sokoni_json_text(b, 'subscriptionId')",
    side: "sokoni_json_text(b, 'side')",
    reference: "sokoni_json_text(b, 'reference')",
    description: "sokoni_json_text(b, 'description')"
  })
  // Entries written before: their postings, with the running balances they give.
  yield* sql.unsafe(`INSERT INTO ledger_postings (entry_id, partition, seq, account, cents, balance_after)
    SELECT e.id, e.partition, e.seq, p.account, p.cents,
           sum(p.cents) OVER (PARTITION BY e.partition, p.account ORDER BY e.seq)
    FROM ledger_entries AS e, jsonb_to_recordset(e.body::jsonb -> 'postings') AS p(account text, cents bigint)`)

  yield* sql.unsafe(`CREATE FUNCTION sokoni_ledger_running_balance() RETURNS trigger LANGUAGE plpgsql AS $fn$
    DECLARE previous record;
    BEGIN
      SELECT seq, balance_after INTO previous FROM ledger_postings
        WHERE partition = NEW.partition AND account = NEW.account ORDER BY seq DESC LIMIT 1;
      IF FOUND AND previous.seq >= NEW.seq THEN
        RAISE EXCEPTION 'ledger: a posting to % in % at position % comes after one at position %',
          NEW.account, NEW.partition, NEW.seq, previous.seq
          USING ERRCODE = 'check_violation', CONSTRAINT = 'ledger_postings_in_order';
      END IF;
      NEW.balance_after := COALESCE(previous.balance_after, 0) + NEW.cents;
      RETURN NEW;
    END $fn$`)
  yield* sql.unsafe(`CREATE TRIGGER ledger_postings_running_balance BEFORE INSERT ON ledger_postings
    FOR EACH ROW EXECUTE FUNCTION sokoni_ledger_running_balance()`)
  yield* sql.unsafe(`CREATE FUNCTION sokoni_ledger_refuse_update() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      RAISE EXCEPTION 'ledger: postings are never changed (entry %)', OLD.entry_id
        USING ERRCODE = 'check_violation', CONSTRAINT = 'ledger_postings_immutable';
    END $fn$`)
  yield* sql.unsafe(`CREATE TRIGGER ledger_postings_immutable BEFORE UPDATE ON ledger_postings
    FOR EACH ROW EXECUTE FUNCTION sokoni_ledger_refuse_update()`)

  // One account of one partition: its balance row (none: 0) against its postings. `full` sums every posting (after a
  // deletion, which the running balances cannot vouch for); otherwise the last running balance is the sum.
  yield* sql.unsafe(`CREATE FUNCTION sokoni_ledger_check_account(p_partition text, p_account text, full_sum boolean) RETURNS void
    LANGUAGE plpgsql AS $fn$
    DECLARE held bigint; posted bigint;
    BEGIN
      SELECT cents INTO held FROM ledger_balances WHERE partition = p_partition AND account = p_account;
      IF full_sum THEN
        SELECT sum(cents) INTO posted FROM ledger_postings WHERE partition = p_partition AND account = p_account;
      ELSE
        SELECT balance_after INTO posted FROM ledger_postings
          WHERE partition = p_partition AND account = p_account ORDER BY seq DESC LIMIT 1;
      END IF;
      IF COALESCE(held, 0) <> COALESCE(posted, 0) THEN
        RAISE EXCEPTION 'ledger: % in % holds % cents but its postings sum to %', p_account, p_partition, COALESCE(held, 0), COALESCE(posted, 0)
          USING ERRCODE = 'check_violation', CONSTRAINT = 'ledger_balance_is_sum_of_postings';
      END IF;
    END $fn$`)
  yield* sql.unsafe(`CREATE FUNCTION sokoni_ledger_check_entry(p_entry text) RETURNS void LANGUAGE plpgsql AS $fn$
    DECLARE total numeric; postings bigint;
    BEGIN
      IF NOT EXISTS (SELECT 1 FROM ledger_entries WHERE id = p_entry) THEN RETURN; END IF;
      SELECT COALESCE(sum(cents), 0), count(*) INTO total, postings FROM ledger_postings WHERE entry_id = p_entry;
      IF total <> 0 OR postings = 0 THEN
        RAISE EXCEPTION 'ledger: entry % has % postings summing to % cents, not zero', p_entry, postings, total
          USING ERRCODE = 'check_violation', CONSTRAINT = 'ledger_entry_balances';
      END IF;
    END $fn$`)
  yield* sql.unsafe(`CREATE FUNCTION sokoni_ledger_check_balance_row() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      IF TG_OP = 'DELETE' THEN
        PERFORM sokoni_ledger_check_account(OLD.partition, OLD.account, false);
      ELSE
        PERFORM sokoni_ledger_check_account(NEW.partition, NEW.account, false);
      END IF;
      RETURN NULL;
    END $fn$`)
  yield* sql.unsafe(`CREATE FUNCTION sokoni_ledger_check_posting_row() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      IF TG_OP = 'DELETE' THEN
        PERFORM sokoni_ledger_check_account(OLD.partition, OLD.account, true);
        PERFORM sokoni_ledger_check_entry(OLD.entry_id);
      ELSE
        PERFORM sokoni_ledger_check_account(NEW.partition, NEW.account, false);
        PERFORM sokoni_ledger_check_entry(NEW.entry_id);
      END IF;
      RETURN NULL;
    END $fn$`)
  yield* sql.unsafe(`CREATE FUNCTION sokoni_ledger_check_entry_row() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      PERFORM sokoni_ledger_check_entry(NEW.id);
      RETURN NULL;
    END $fn$`)
  yield* sql.unsafe(`CREATE CONSTRAINT TRIGGER ledger_balance_is_sum_of_postings AFTER INSERT OR UPDATE OR DELETE ON ledger_balances
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION sokoni_ledger_check_balance_row()`)
  yield* sql.unsafe(`CREATE CONSTRAINT TRIGGER ledger_postings_match_balance AFTER INSERT OR DELETE ON ledger_postings
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION sokoni_ledger_check_posting_row()`)
  yield* sql.unsafe(`CREATE CONSTRAINT TRIGGER ledger_entry_balances AFTER INSERT OR UPDATE ON ledger_entries
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION sokoni_ledger_check_entry_row()`)
})
