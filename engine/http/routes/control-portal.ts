/**
 * Control routes of the portal (spec/control.yaml): the simulated identity provider's tokens, the service's review
 * of applications, and the operator's partner switches (OAuth enablement, suspension). Decoding only.
 */
import { Effect, Schema } from "effect"
import { IdentityProvider } from "../../app/identity.ts"
import { PortalService } from "../../app/portal.ts"
import { PortalAccountService } from "../../app/portal-account.ts"
import { required, text } from "../query.ts"
import { controlRoute } from "../route.ts"
import { maxCharacters, minCharacters } from "../body.ts"

const IdTokenBody = Schema.Struct({
  uid: Schema.String.check(minCharacters(1), maxCharacters(128)),
  email: Schema.String.check(Schema.isPattern(/^[^@\s]+@[^@\s]+\.[^@\s]+$/)),
  emailVerified: Schema.optionalKey(Schema.Boolean)
})
const RejectBody = Schema.Struct({ reason: Schema.String.check(minCharacters(1), maxCharacters(500)) })
const OAuthBody = Schema.Struct({ enabled: Schema.Boolean })
const StatusBody = Schema.Struct({ status: Schema.Literals(["active", "suspended"]) })

export const portalControlRoutes = [
  controlRoute("issueSimIdToken", 200, {
    body: IdTokenBody,
    handle: ({ body }) =>
      IdentityProvider.use((idp) =>
        Effect.map(idp.issue({ uid: body.uid, email: body.email, emailVerified: body.emailVerified ?? true }), (idToken) => ({ idToken }))
      )
  }),
  controlRoute("approveSimApplication", 200, {
    params: { applicationId: required(text) },
    handle: ({ params }) => PortalService.use((p) => p.approve(params.applicationId))
  }),
  controlRoute("rejectSimApplication", 200, {
    params: { applicationId: required(text) },
    body: RejectBody,
    handle: ({ params, body }) => PortalService.use((p) => p.reject(params.applicationId, body.reason))
  }),
  controlRoute("setSimPartnerOAuth", 200, {
    params: { partnerId: required(text) },
    body: OAuthBody,
    handle: ({ params, body }) => PortalService.use((p) => p.setOAuth(params.partnerId, body.enabled))
  }),
  controlRoute("issueSimLiveKey", 201, {
    params: { partnerId: required(text) },
    handle: ({ params }) => PortalAccountService.use((a) => a.issueLiveKey(params.partnerId))
  }),
  controlRoute("setSimPartnerStatus", 200, {
    params: { partnerId: required(text) },
    body: StatusBody,
    handle: ({ params, body }) => PortalService.use((p) => p.setStatus(params.partnerId, body.status))
  })
]
