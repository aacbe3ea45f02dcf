/**
 * Where a corporate action raised through the control API is stored (D-302): partition "global", by announcement
 * time. Shared by the actions' writer (app/corporate-actions/write-plan.ts) and the jobs that complete an action later
 * (app/corporate-actions/symbol-change.ts, app/corporate-actions/rights.ts). The record itself is built by the rules (domain/corporate-actions/).
 */
import type { ActionRecord } from "../../domain/reference/corporate-actions.ts"
import type { Tx } from "../../store/port.ts"
import { SimActions, timeSortKey } from "../docs.ts"

export const saveAction = (tx: Tx, a: ActionRecord) => SimActions.put(tx, a.actionId, "global", timeSortKey(a.announcedAt, a.actionId), a)
