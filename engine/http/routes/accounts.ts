/**
 * Sub-account routes (contract tags "Sub-accounts" and "KYC"): create, auto-register, list, read, summaries,
 * close, freeze, unfreeze, KYC and devices. Body schemas mirror the contract's request schemas (types, enums
 * case-exact, lengths, patterns); the rules are the services'. Decoding only.
 */
import { Effect, Schema } from "effect"
import { AccountLifecycleService } from "../../app/account-lifecycle/service.ts"
import { AccountsService } from "../../app/accounts.ts"
import { DeviceService } from "../../app/devices/service.ts"
import { integer, oneOf, optional, required, text } from "../query.ts"
import { partnerRoute, WithStatus } from "../route.ts"
import { PAGE } from "./market-data.ts"
import { maxCharacters, minCharacters } from "../body.ts"

/** The address shape the contract's `format: email` takes. */
export const Email = Schema.String.check(Schema.isPattern(/^[^@\s]+@[^@\s]+\.[^@\s]+$/))
const IdText = Schema.String.check(minCharacters(1), maxCharacters(128))
const upTo = (n: number) => Schema.String.check(maxCharacters(n))

/** The contract's CreateSubAccountRequest. */
export const CreateSubAccountBody = Schema.Struct({
  externalId: IdText,
  displayName: Schema.optionalKey(Schema.String),
  email: Schema.optionalKey(Email),
  phone: Schema.optionalKey(Schema.String.check(Schema.isPattern(/^\+[1-9][0-9]{6,14}$/))),
  country: Schema.optionalKey(Schema.String.check(Schema.isPattern(/^[A-Z]{2}$/)))
})

/** The contract's AutoRegisterRequest. */
export const AutoRegisterBody = Schema.Struct({
  uid: IdText,
  email: Schema.optionalKey(Email),
  externalId: Schema.optionalKey(IdText),
  displayName: Schema.optionalKey(upTo(200))
})

/** The contract's FreezeRequest (the body is optional). */
export const FreezeBody = Schema.Struct({ reason: Schema.optionalKey(upTo(500)) })

const Level = Schema.Literals(["NONE", "BASIC", "FULL"])
const RejectionFields = {
  kycLevel: Schema.optionalKey(Level),
  reference: Schema.optionalKey(upTo(200)),
  rejectionCode: Schema.optionalKey(Schema.String.check(minCharacters(1), maxCharacters(64))),
  rejectionReason: Schema.optionalKey(Schema.String.check(minCharacters(1), maxCharacters(500)))
}

/** The contract's KycAssertionRequest. */
export const KycBody = Schema.Struct({ kycStatus: Schema.Literals(["PENDING", "VERIFIED", "REJECTED"]), ...RejectionFields })
/** The control contract's ComplianceKycRequest: the assertion, plus NONE. */
export const ComplianceKycBody = Schema.Struct({ kycStatus: Schema.Literals(["NONE", "PENDING", "VERIFIED", "REJECTED"]), ...RejectionFields })

/** The contract's RegisterDeviceRequest. */
export const DeviceBody = Schema.Struct({
  platform: Schema.Literals(["ios", "android", "web"]),
  pushToken: Schema.String.check(minCharacters(8), maxCharacters(4096)),
  name: Schema.optionalKey(upTo(100)),
  appVersion: Schema.optionalKey(upTo(50))
})

export const userParam = { userId: required(text) }

export const accountRoutes = [
  partnerRoute("createSubAccount", 201, {
    body: CreateSubAccountBody,
    handle: ({ body, principal }) => AccountsService.use((a) => a.create(principal, body))
  }),
  partnerRoute("autoRegisterSubAccount", 201, {
    body: AutoRegisterBody,
    handle: ({ body, principal }) =>
      AccountsService.use((a) => Effect.map(a.autoRegister(principal, body), (r) => (r.created ? new WithStatus(201, r.body) : new WithStatus(200, r.body))))
  }),
  partnerRoute("listSubAccounts", 200, {
    query: {
      limit: optional(integer({ min: 1, max: 200 })),
      status: optional(oneOf(["active", "frozen", "closed", "ALL"])),
      externalId: optional(text),
      ...PAGE
    },
    handle: ({ query, principal }) => AccountsService.use((a) => a.list(principal, query))
  }),
  partnerRoute("getSubAccountSummaries", 200, {
    query: { userIds: required(text) },
    handle: ({ query, principal }) => AccountsService.use((a) => a.summaries(principal, query.userIds))
  }),
  partnerRoute("getSubAccount", 200, {
    params: userParam,
    handle: ({ params, principal }) => AccountsService.use((a) => a.get(principal, params.userId))
  }),
  partnerRoute("closeSubAccount", 200, {
    params: userParam,
    handle: ({ params, principal }) => AccountLifecycleService.use((l) => l.close(principal, params.userId))
  }),
  partnerRoute("freezeSubAccount", 200, {
    params: userParam,
    body: FreezeBody,
    handle: ({ params, body, principal }) => AccountLifecycleService.use((l) => l.setFrozen(principal, params.userId, true, body.reason))
  }),
  partnerRoute("unfreezeSubAccount", 200, {
    params: userParam,
    body: FreezeBody,
    handle: ({ params, body, principal }) => AccountLifecycleService.use((l) => l.setFrozen(principal, params.userId, false, body.reason))
  }),
  partnerRoute("assertSubAccountKyc", 200, {
    params: userParam,
    body: KycBody,
    handle: ({ params, body, principal }) => AccountLifecycleService.use((l) => l.assertKyc(principal, params.userId, body))
  }),
  partnerRoute("listSubAccountDevices", 200, {
    params: userParam,
    handle: ({ params, principal }) => DeviceService.use((d) => d.list(principal, params.userId))
  }),
  partnerRoute("registerSubAccountDevice", 201, {
    params: userParam,
    body: DeviceBody,
    handle: ({ params, body, principal }) => DeviceService.use((d) => d.register(principal, params.userId, body))
  }),
  partnerRoute("removeSubAccountDevice", 200, {
    params: { ...userParam, deviceId: required(text) },
    handle: ({ params, principal }) => DeviceService.use((d) => d.remove(principal, params.userId, params.deviceId))
  })
]
