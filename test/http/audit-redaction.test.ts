/**
 * The audit log keeps no raw key (D-060, E-030): whatever a caller sends that reaches a record, be it a portal member's
 * name from its ID token, is masked to the key's prefix and last 4 characters. Memory store: the masking is done
 * before the record is written, the same for both stores.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { LIVE, SANDBOX } from "./accounts-kit.ts"
import { startEngine } from "./harness.ts"

describe("the audit log's masking of key-shaped text", () => {
  let engine: ReturnType<typeof startEngine>
  beforeEach(() => {
    engine = startEngine()
  })
  afterEach(() => engine.dispose())

  it("masks a key pasted into a portal member's name, keeping its prefix and last 4", async () => {
    const pasted = "sk_sandbox_0123456789abcdefWXYZ"
    const uid = `member-${pasted}`
    const token = (await engine.admin("POST", "/_sim/idp/tokens", { uid, email: "paste@acme.test" })).body.idToken as string
    const bearer = { authorization: `Bearer ${token}` }
    const applied = await engine.call("POST", `${LIVE}/apply`, { headers: bearer, body: { businessName: "Paste Co", email: "p@co.test", country: "KE" } })
    expect(applied.status).toBe(201)
    const registered = await engine.call("POST", "/api/sandbox/v1/register", { headers: bearer, body: { businessName: "Paste Co", email: "p@co.test" } })
    expect(registered.status).toBe(201)
    const records = (await engine.call("GET", `${SANDBOX}/audit`, { headers: { "x-api-key": registered.body.apiKey } })).body.records
    expect(records.map((r: any) => [r.action, r.actorType, r.actorId])).toEqual([["key.rotate", "portal_member", "member-sk_sandbox_…WXYZ"]])
    expect(JSON.stringify(records)).not.toContain(pasted)
  })
})
