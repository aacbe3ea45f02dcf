/**
 * Control route of corporate actions (spec/control.yaml, tag "Corporate actions", D-302): raising a dividend, split,
 * suspension, delisting, rights issue or symbol change on a listing. Decoding only; the work is CorporateActions'.
 */
import { Schema } from "effect"
import { CorporateActions } from "../../app/corporate-actions.ts"
import { controlRoute } from "../route.ts"

const ratio = Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 1000 })))
const text = (max: number) => Schema.optionalKey(Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(max)))
const positive = Schema.optionalKey(Schema.Number.check(Schema.isGreaterThan(0)))

const RaiseBody = Schema.Struct({
  actionType: Schema.Literals(["DIVIDEND", "SPLIT", "REVERSE_SPLIT", "BONUS", "SUSPENSION", "RESUMPTION", "DELISTING", "RIGHTS_ISSUE", "SYMBOL_CHANGE"]),
  symbol: Schema.String,
  exchange: Schema.optionalKey(Schema.String),
  description: text(500),
  dividendPerShare: positive,
  ratioFrom: ratio,
  ratioTo: ratio,
  reason: text(500),
  expectedResumeAt: Schema.optionalKey(Schema.String),
  ratioHeld: ratio,
  ratioEntitled: ratio,
  subscriptionPrice: positive,
  subscriptionDeadline: Schema.optionalKey(Schema.String),
  newSymbol: Schema.optionalKey(Schema.String),
  effectiveDate: Schema.optionalKey(Schema.String)
})

export const corporateControlRoutes = [
  controlRoute("raiseSimCorporateAction", 201, {
    body: RaiseBody,
    handle: ({ body }) => CorporateActions.use((c) => c.raise(body))
  })
]
