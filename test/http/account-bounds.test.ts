/**
 * The body bounds of the accounts family's routes, at the edge: the longest accepted value passes, one more is 400
 * VALIDATION_ERROR naming the field. Mirrors the contract's maxLength/maximum on each request schema.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startEngine } from "./harness.ts"
import { partnerOf } from "./accounts-kit.ts"

describe("request bounds of the accounts family", () => {
  let engine: ReturnType<typeof startEngine>
  let p: Awaited<ReturnType<typeof partnerOf>>
  let id: string
  beforeAll(async () => {
    engine = startEngine()
    p = await partnerOf(engine)
    id = (await p.createUser()).subAccountId
  })
  afterAll(() => engine.dispose())

  const edge = (n: number) => "x".repeat(n)
  const cases: Array<[string, (ok: boolean) => [string, string, unknown], string]> = [
    ["auto-register displayName 200", (ok) => ["POST", "/auto-register", { uid: `u-${ok}`, displayName: edge(ok ? 200 : 201) }], "displayName"],
    ["auto-register uid 128", (ok) => ["POST", "/auto-register", { uid: edge(ok ? 128 : 129) }], "uid"],
    [
      "auto-register externalId 128",
      (ok) => ["POST", "/auto-register", { uid: `e-${ok}`, externalId: `${ok ? "a" : "b"}${edge(ok ? 127 : 128)}` }],
      "externalId"
    ],
    ["kyc reference 200", (ok) => ["POST", `/users/${id}/kyc`, { kycStatus: "PENDING", reference: edge(ok ? 200 : 201) }], "reference"],
    [
      "kyc rejectionCode 64",
      (ok) => ["POST", `/users/${id}/kyc`, { kycStatus: "REJECTED", rejectionCode: edge(ok ? 64 : 65), rejectionReason: "r" }],
      "rejectionCode"
    ],
    [
      "kyc rejectionReason 500",
      (ok) => ["POST", `/users/${id}/kyc`, { kycStatus: "REJECTED", rejectionCode: "c", rejectionReason: edge(ok ? 500 : 501) }],
      "rejectionReason"
    ],
    [
      "kyc reason non-empty",
      (ok) => ["POST", `/users/${id}/kyc`, { kycStatus: "REJECTED", rejectionCode: "c", rejectionReason: ok ? "r" : "" }],
      "rejectionReason"
    ],
    ["device pushToken 4096", (ok) => ["POST", `/users/${id}/devices`, { platform: "web", pushToken: edge(ok ? 4096 : 4097) }], "pushToken"],
    ["device name 100", (ok) => ["POST", `/users/${id}/devices`, { platform: "web", pushToken: "token-name", name: edge(ok ? 100 : 101) }], "name"],
    [
      "device appVersion 50",
      (ok) => ["POST", `/users/${id}/devices`, { platform: "web", pushToken: "token-app", appVersion: edge(ok ? 50 : 51) }],
      "appVersion"
    ],
    ["unfreeze reason 500", (ok) => ["POST", `/users/${id}/unfreeze`, { reason: edge(ok ? 500 : 501) }], "reason"],
    ["deposit note 500", (ok) => ["POST", `/users/${id}/deposit`, { amount: 1, note: edge(ok ? 500 : 501) }], "note"],
    ["deposit reference 200", (ok) => ["POST", `/users/${id}/deposit`, { amount: 1, reference: edge(ok ? 200 : 201) }], "reference"],
    [
      "deposit localAmount 1e11",
      (ok) => ["POST", `/users/${id}/deposit`, { amount: 1, localCurrency: "KES", fxRate: 1, localAmount: ok ? 1e11 : 1e11 + 1 }],
      "localAmount"
    ],
    ["deposit fxRate 1e6", (ok) => ["POST", `/users/${id}/deposit`, { amount: 1, localCurrency: "KES", fxRate: ok ? 1e6 : 1e6 + 1 }], "fxRate"],
    ["withdraw amount 1e10", (ok) => ["POST", `/users/${id}/withdraw`, { amount: ok ? 0.01 : 1e10 + 0.01 }], "amount"]
  ]

  it.each(cases)("%s", async (_, make, param) => {
    const [method, path, body] = make(true)
    const accepted = await p.sb(method, path, body)
    expect(accepted.status, JSON.stringify(accepted.body)).toBeLessThan(300)
    const [m2, p2, b2] = make(false)
    const refused = await p.sb(m2, p2, b2)
    expect(refused.status).toBe(400)
    expect(refused.body.error).toMatchObject({ code: "VALIDATION_ERROR", param })
  })

  it("the compliance freeze reason is at most 500 characters", async () => {
    expect((await engine.admin("POST", `/_sim/users/${id}/freeze`, { frozen: false, reason: edge(500) })).status).toBe(200)
    const r = await engine.admin("POST", `/_sim/users/${id}/freeze`, { frozen: false, reason: edge(501) })
    expect(r.status).toBe(400)
    expect(r.body.error).toMatchObject({ code: "VALIDATION_ERROR", param: "reason" })
    const kyc = await engine.admin("POST", `/_sim/users/${id}/kyc`, { kycStatus: "PENDING", reference: edge(201) })
    expect(kyc.body.error).toMatchObject({ code: "VALIDATION_ERROR", param: "reference" })
  })
})
