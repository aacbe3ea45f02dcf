/**
 * Holders: who holds a listing across every partner and environment, and writing one holder's position: the reads
 * and writes corporate actions share (app/corporate-actions/service.ts, app/corporate-actions/symbol-change.ts, app/corporate-actions/rights.ts). Functions over a
 * transaction, no service. Does not own the ledger's holding reads for one account (app/ledger.ts) nor what an action
 * does with the holders.
 */
import { Effect } from "effect"
import type { ReadTx, Tx } from "../../store/port.ts"
import { type HoldingDoc, Holdings, holdingId, Partners } from "../docs.ts"
import { partitionOf } from "../principal.ts"

/** One holder of a listing: where, which account, and the holding. */
export interface Holder {
  readonly partition: string
  readonly account: string
  readonly holding: HoldingDoc
}

/** Every partner's partitions: `all` for holdings (property is kept whatever the partner's status), else active. */
export const partnerPartitions = (tx: ReadTx, all: boolean) =>
  Effect.map(Partners.list(tx, "global", { limit: 1_000_000, order: "asc" }), (partners) =>
    partners.filter((p) => all || p.status !== "suspended").flatMap((p) => [partitionOf(p.partnerId, "sandbox"), partitionOf(p.partnerId, "production")])
  )

/**
 * Every account with a position in `symbol` (units held, or `withReserved` units reserved too), partition by
 * partition, in sort-key order (account, then symbol).
 */
export const holdersOf = (tx: ReadTx, symbol: string, withReserved = false) =>
  Effect.gen(function* () {
    const out: Array<Holder> = []
    for (const partition of yield* partnerPartitions(tx, true)) {
      const docs = yield* Holdings.listDocs(tx, { partition, limit: 1_000_000, order: "asc" })
      for (const d of docs) {
        const holding = d.body
        if (holding.symbol === symbol && (holding.quantity > 0 || (withReserved && holding.reserved > 0))) {
          out.push({ partition, account: d.sortKey.split("|")[0] ?? "master", holding })
        }
      }
    }
    return out
  })

/** Writes the holder's position in `holding.symbol`. */
export const putHolding = (tx: Tx, h: Pick<Holder, "partition" | "account">, holding: HoldingDoc) =>
  Holdings.put(tx, holdingId(h.partition, h.account, holding.symbol), h.partition, `${h.account}|${holding.symbol}`, holding)
