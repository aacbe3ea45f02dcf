/**
 * Control route of corporate actions (spec/control.yaml, tag "Corporate actions", D-302): raising a dividend, split,
 * suspension, delisting, rights issue or symbol change on a listing; taking up a rights entitlement for a holder. Decoding only; the work is CorporateActions'.
 */
import { Schema } from "effect"
import { CorporateActions } from "../../app/corporate-actions/service.ts"
import { Rights } from "../../app/corporate-actions/rights.ts"
import { controlRoute } from "../route.ts"
import { required, text as pathText } from "../query.ts"
import { maxCharacters, minCharacters } from "../body.ts"

const ratio = Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 1000 })))
const text = (max: number) => Schema.optionalKey(Schema.String.check(minCharacters(1), maxCharacters(max)))
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

const TakeUpBody = Schema.Struct({
  subAccountId: Schema.optionalKey(Schema.String),
  partnerId: Schema.optionalKey(Schema.String),
  environment: Schema.optionalKey(Schema.Literals(["sandbox", "production"])),
  units: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(1)))
})

export const corporateControlRoutes = [
  controlRoute("raiseSimCorporateAction", 201, {
    body: RaiseBody,
    handle: ({ body }) => CorporateActions.use((c) => c.raise(body))
  }),
  controlRoute("takeUpSimRights", 200, {
    params: { actionId: required(pathText) },
    body: TakeUpBody,
    handle: ({ params, body }) => Rights.use((r) => r.takeUp(params.actionId, body))
  })
]
