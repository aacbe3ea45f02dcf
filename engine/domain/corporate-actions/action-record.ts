/**
 * An action raised through the control API as a record (D-302) and its announcement: the action's own
 * `corporateaction.*` event and the generic `corporateaction.declared` (D-074), to every active partner's partitions.
 * Pure. Owns: the record's construction and the announced payloads. Does not own storing them (app/corporate-actions/)
 * nor how actions are listed (app/corporate.ts).
 */
import type { Schemas } from "../../contract/wire.ts"
import type { Instrument } from "../instruments.ts"
import type { ActionRecord, ActionType } from "../reference/corporate-actions.ts"
import { dayStart, isoDate } from "../reference/seeded.ts"
import type { PartitionEvent } from "./plan.ts"

const isoAt = (ms: number): string => new Date(ms).toISOString()

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

/** What every action's event says of it (the spec's CorporateActionBase). */
export const actionBaseToWire = (a: ActionRecord): Schemas["CorporateActionBase"] => ({
  actionId: a.actionId,
  actionType: a.actionType,
  symbol: a.symbol,
  exchange: a.exchange,
  name: a.name,
  announcedAt: isoAt(a.announcedAt),
  effectiveDate: isoDate(a.effectiveAt),
  description: a.description
})

/** The action's own event (its base and `extra`) then the generic one, partition by partition. */
export const announcements = (
  partitions: ReadonlyArray<string>,
  event: string,
  a: ActionRecord,
  extra: Readonly<Record<string, unknown>>
): ReadonlyArray<PartitionEvent> => {
  const base = actionBaseToWire(a)
  return partitions.flatMap((partition) => [
    { partition, name: event, data: { ...base, ...extra } },
    { partition, name: "corporateaction.declared", data: base }
  ])
}
