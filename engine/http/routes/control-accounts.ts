/**
 * Control routes of the compliance desk (spec/control.yaml, tag "Compliance"): KYC overrides and freezes of any
 * partner's sub-account, by the service rather than the partner (decision D-100). Decoding only.
 */
import { Schema } from "effect"
import { AccountLifecycleService } from "../../app/account-lifecycle/service.ts"
import { controlRoute } from "../route.ts"
import { ComplianceKycBody, userParam } from "./accounts.ts"
import { maxCharacters } from "../body.ts"

const ComplianceFreezeBody = Schema.Struct({ frozen: Schema.Boolean, reason: Schema.optionalKey(Schema.String.check(maxCharacters(500))) })

export const complianceRoutes = [
  controlRoute("overrideSimSubAccountKyc", 200, {
    params: userParam,
    body: ComplianceKycBody,
    handle: ({ params, body }) => AccountLifecycleService.use((l) => l.overrideKyc(params.userId, body))
  }),
  controlRoute("freezeSimSubAccount", 200, {
    params: userParam,
    body: ComplianceFreezeBody,
    handle: ({ params, body }) => AccountLifecycleService.use((l) => l.complianceFreeze(params.userId, body.frozen, body.reason))
  })
]
