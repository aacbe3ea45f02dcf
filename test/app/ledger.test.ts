/**
 * The ledger service's guards on the memory store: an entry that does not balance, or that would leave a wallet or
 * an escrow negative, is a defect that writes nothing; ids are deterministic; balances and history rows follow the
 * postings; holdings are read per account.
 */
import { assert, describe, it } from "@effect/vitest"
import { Cause, Effect, Exit } from "effect"
import { Balances, Holdings, Journal, WalletTxns } from "../../engine/app/docs.ts"
import {
  applyOrderTransition,
  balanceOf,
  creditWallet,
  entryIdOf,
  holdingsOf,
  LedgerInvariantError,
  lastMovedAt,
  postEntry,
  seedWallet,
  seqKey
} from "../../engine/app/ledger.ts"
import { SandboxService } from "../../engine/app/sandbox/service.ts"
import { makeMemoryStore } from "../../engine/store/memory.ts"
import { startEngine } from "../http/harness.ts"

const P = "ptn_l:sandbox"

const dies = (exit: Exit.Exit<unknown, unknown>, message: string) => {
  assert.isTrue(Exit.isFailure(exit))
  if (Exit.isFailure(exit)) {
    const defect = exit.cause.reasons.find((r) => r._tag === "Die")
    assert.isDefined(defect)
    const error = (defect as { defect: unknown }).defect
    assert.instanceOf(error, LedgerInvariantError)
    assert.strictEqual((error as LedgerInvariantError).message, message)
    assert.isFalse(Cause.hasFails(exit.cause))
  }
}

describe("ledger service", () => {
  it("entry ids are txn_ and 16 base32 characters, a function of partition and position", () => {
    const id = entryIdOf(P, 1)
    assert.match(id, /^txn_[0-9a-hjkmnp-tv-z]{16}$/)
    assert.strictEqual(entryIdOf(P, 1), id)
    assert.notStrictEqual(entryIdOf(P, 2), id)
    assert.notStrictEqual(entryIdOf("ptn_l:production", 1), id)
    assert.strictEqual(seqKey(42), "000000000000042")
  })

  it.effect("an unbalanced entry and an overdraft die and write nothing", () =>
    Effect.gen(function* () {
      const store = yield* makeMemoryStore
      const unbalanced = yield* Effect.exit(
        store.transact((tx) => postEntry(tx, P, { kind: "DEPOSIT", postings: [{ account: "wallet:master", cents: 5 }], at: 1, description: "x" }))
      )
      dies(unbalanced, "ledger entry DEPOSIT does not balance (1 postings, sum 5)")
      const empty = yield* Effect.exit(store.transact((tx) => postEntry(tx, P, { kind: "DEPOSIT", postings: [], at: 1, description: "x" })))
      dies(empty, "ledger entry DEPOSIT does not balance (0 postings, sum 0)")
      const overdraft = yield* Effect.exit(
        store.transact((tx) =>
          postEntry(tx, P, {
            kind: "WITHDRAWAL",
            postings: [
              { account: "wallet:usr_1", cents: -1 },
              { account: "wallet:master", cents: 1 }
            ],
            at: 1,
            description: "x"
          })
        )
      )
      dies(overdraft, "ledger entry WITHDRAWAL would leave wallet:usr_1 at -0.01 USD")
      const escrow = yield* Effect.exit(
        store.transact((tx) =>
          postEntry(tx, P, {
            kind: "ORDER_REJECTED",
            postings: [
              { account: "escrow:master", cents: -1 },
              { account: "wallet:master", cents: 1 }
            ],
            at: 1,
            description: "x"
          })
        )
      )
      dies(escrow, "ledger entry ORDER_REJECTED would leave escrow:master at -0.01 USD")
      const journal = yield* store.read((tx) => Journal.list(tx, P, { limit: 10, order: "asc" }))
      assert.deepStrictEqual(journal, [])
      // the market and the equity accounts may go negative
      yield* store.transact((tx) =>
        postEntry(tx, P, {
          kind: "ORDER_FILLED",
          postings: [
            { account: "market", cents: -7 },
            { account: "equity:seed", cents: -3 },
            { account: "fees", cents: 10 }
          ],
          at: 1,
          description: "x"
        })
      )
      assert.strictEqual(yield* store.read((tx) => balanceOf(tx, P, "market")), -7)
    })
  )

  it.effect("posting keeps balances, their times, the journal and each wallet's history", () =>
    Effect.gen(function* () {
      const store = yield* makeMemoryStore
      assert.strictEqual(yield* store.transact((tx) => seedWallet(tx, P, "master", 1000, 10)), 1000)
      assert.strictEqual(yield* store.transact((tx) => creditWallet(tx, P, 250, 20)), 1250)
      const posted = yield* store.transact((tx) =>
        postEntry(tx, P, {
          kind: "DEPOSIT",
          postings: [
            { account: "wallet:master", cents: -200 },
            { account: "wallet:usr_1", cents: 120 },
            { account: "wallet:usr_1", cents: 80 }
          ],
          at: 30,
          description: "Deposit",
          reference: "r-1",
          note: "n"
        })
      )
      assert.strictEqual(posted.after.get("wallet:usr_1"), 200)
      assert.deepStrictEqual(posted.entry, {
        entryId: entryIdOf(P, 3),
        partition: P,
        seq: 3,
        at: 30,
        kind: "DEPOSIT",
        postings: [
          { account: "wallet:master", cents: -200 },
          { account: "wallet:usr_1", cents: 200 }
        ],
        orderId: null,
        side: null,
        reference: "r-1",
        note: "n",
        description: "Deposit"
      })
      const balances = yield* store.read((tx) => Balances.list(tx, P, { limit: 10, order: "asc" }))
      assert.deepStrictEqual(balances, [
        { account: "equity:credit", cents: -250, updatedAt: 20 },
        { account: "equity:seed", cents: -1000, updatedAt: 10 },
        { account: "wallet:master", cents: 1050, updatedAt: 30 },
        { account: "wallet:usr_1", cents: 200, updatedAt: 30 }
      ])
      assert.strictEqual(yield* store.read((tx) => lastMovedAt(tx, P, "wallet:master")), 30)
      assert.isUndefined(yield* store.read((tx) => lastMovedAt(tx, P, "wallet:nobody")))
      const history = yield* store.read((tx) => WalletTxns.list(tx, `${P}/usr_1`, { limit: 10, order: "asc" }))
      // postings to one account are netted: one history row per wallet an entry moves
      assert.deepStrictEqual(
        history.map((h) => [h.type, h.cents, h.balanceAfter, h.reference, h.transactionId]),
        [["DEPOSIT", 200, 200, "r-1", posted.entry.entryId]]
      )
      assert.deepStrictEqual(posted.entry.postings, [
        { account: "wallet:master", cents: -200 },
        { account: "wallet:usr_1", cents: 200 }
      ])
      // the master wallet keeps its history too (the TRANSACTIONS and STATEMENT reports list it, D-261), with the
      // entry's journal position that orders rows of one millisecond
      const master = yield* store.read((tx) => WalletTxns.list(tx, `${P}/master`, { limit: 10, order: "asc" }))
      assert.deepStrictEqual(
        master.map((h) => [h.type, h.cents, h.balanceAfter, h.seq]),
        [
          ["ADJUSTMENT", 1000, 1000, 1],
          ["ADJUSTMENT", 250, 1250, 2],
          ["DEPOSIT", -200, 1050, 3]
        ]
      )
    })
  )

  it.effect("order transitions post their money and move holdings; a SELL placement posts no entry", () =>
    Effect.gen(function* () {
      const store = yield* makeMemoryStore
      yield* store.transact((tx) => seedWallet(tx, P, "usr_1", 1000, 1))
      const base = { account: "usr_1", symbol: "SCOM.KE", orderId: "ord_1", side: "BUY" as const, at: 2 }
      yield* store.transact((tx) =>
        applyOrderTransition(tx, P, {
          ...base,
          kind: "ORDER_PLACED",
          escrowDelta: 600,
          movements: { wallet: -600, feesCollected: 0, marketNet: 0, shares: 0, sharesReserved: 0 }
        })
      )
      yield* store.transact((tx) =>
        applyOrderTransition(tx, P, {
          ...base,
          kind: "ORDER_FILLED",
          escrowDelta: -600,
          movements: { wallet: 10, feesCollected: 4, marketNet: -586, shares: 5, sharesReserved: 0 }
        })
      )
      yield* store.transact((tx) =>
        applyOrderTransition(tx, P, {
          ...base,
          side: "SELL",
          orderId: "ord_2",
          kind: "ORDER_PLACED",
          escrowDelta: 0,
          movements: { wallet: 0, feesCollected: 0, marketNet: 0, shares: 0, sharesReserved: 2 }
        })
      )
      yield* store.transact((tx) => Holdings.put(tx, `${P}|usr_10|EQTY.KE`, P, "usr_10|EQTY.KE", { symbol: "EQTY.KE", quantity: 9, reserved: 0 }))
      const journal = yield* store.read((tx) => Journal.list(tx, P, { limit: 10, order: "asc" }))
      assert.deepStrictEqual(
        journal.map((e) => [e.kind, e.orderId, e.side]),
        [
          ["SEED", null, null],
          ["ORDER_PLACED", "ord_1", "BUY"],
          ["ORDER_FILLED", "ord_1", "BUY"]
        ]
      )
      assert.strictEqual(journal[2]?.description, "Unused escrow returned: filled BUY SCOM.KE (order ord_1)")
      assert.deepStrictEqual(yield* store.read((tx) => holdingsOf(tx, P, "usr_1")), [{ symbol: "SCOM.KE", quantity: 5, reserved: 2 }])
      assert.deepStrictEqual(yield* store.read((tx) => holdingsOf(tx, P, "usr_10")), [{ symbol: "EQTY.KE", quantity: 9, reserved: 0 }])
      assert.strictEqual(yield* store.read((tx) => balanceOf(tx, P, "market")), 586)
      const bad = yield* Effect.exit(
        store.transact((tx) =>
          applyOrderTransition(tx, P, {
            ...base,
            kind: "ORDER_FILLED",
            escrowDelta: 0,
            movements: { wallet: 1, feesCollected: 0, marketNet: 0, shares: 0, sharesReserved: 0 }
          })
        )
      )
      dies(bad, "order ord_1: ORDER_FILLED movements do not balance")
    })
  )
})

describe("sandbox reset service", () => {
  it("refuses a production principal (the route only serves the sandbox, the service says so too)", async () => {
    const engine = startEngine()
    try {
      const exit = await engine.runtime.runPromise(
        Effect.exit(
          SandboxService.use((s) =>
            s.reset({ partnerId: "ptn_x", environment: "production", keyKind: "full", tier: "starter", markupBps: 0, partition: "ptn_x:production" })
          )
        )
      )
      assert.isTrue(Exit.isFailure(exit))
      if (Exit.isFailure(exit)) {
        const failure = exit.cause.reasons.find((r) => r._tag === "Fail") as { error: { code: string; message: string } } | undefined
        assert.deepStrictEqual([failure?.error.code, failure?.error.message], ["FORBIDDEN", "only the sandbox can be reset"])
      }
    } finally {
      await engine.dispose()
    }
  })
})
