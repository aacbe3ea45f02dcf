/**
 * Action records: building, saving and announcing a corporate action raised through the control API (D-302), shared
 * by the actions (app/corporate-actions.ts) and the symbol change (app/symbol-change.ts). Functions over a
 * transaction. Does not own what an action does to holders, nor how actions are listed (app/corporate.ts).
 */
import { Effect } from "effect"
import type { Instrument } from "../domain/instruments.ts"
import type { ActionRecord, ActionType } from "../domain/reference/corporate-actions.ts"
import { dayStart } from "../domain/reference/seeded.ts"
import type { EventLog } from "../events/event-log.ts"
import type { Tx } from "../store/port.ts"
import { actionBaseToWire } from "./corporate.ts"
import { SimActions, timeSortKey } from "./docs.ts"
import { partnerPartitions } from "./holders.ts"

/** An action on `instrument` announced `now`, effective from `effectiveAt` (today by default), completed now or not yet. */
export const actionOf = (
  instrument: Instrument,
  actionId: string,
  actionType: ActionType,
  now: number,
  description: string,
  details: ActionRecord["details"],
  completed: boolean,
  effectiveAt = dayStart(now)
): ActionRecord => ({
  actionId,
  actionType,
  symbol: instrument.symbol,
  exchange: instrument.exchange,
  name: instrument.name,
  announcedAt: now,
  effectiveAt,
  description,
  details,
  completedAt: completed ? now : null
})

export const saveAction = (tx: Tx, a: ActionRecord) => SimActions.put(tx, a.actionId, "global", timeSortKey(a.announcedAt, a.actionId), a)

/** The action's own event and the generic one (D-074), to every active partner's partitions. */
export const announceAction = (events: EventLog["Service"], tx: Tx, event: string, a: ActionRecord, extra: Record<string, unknown>) =>
  Effect.gen(function* () {
    const base = actionBaseToWire(a)
    for (const partition of yield* partnerPartitions(tx, false)) {
      yield* events.append(tx, partition, event, { ...base, ...extra })
      yield* events.append(tx, partition, "corporateaction.declared", base)
    }
  })
