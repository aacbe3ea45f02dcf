/**
 * A partner's lifecycle (domain/partners/decide-partner.ts, decide-account.ts): bootstrapping gives an active partner
 * two full keys (stored as hashes with their last 4) and seeds only the sandbox master wallet; a top-up is positive
 * cents of an existing partner; an upgrade only goes up a tier, and asks for live only before approval; revoking a
 * production key never leaves none, moves the pointer off it, and is idempotent.
 */
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import type { Tier } from "../../engine/app/principal.ts"
import {
  acceptUpgrade,
  type ApplicationState,
  decideRevoke,
  decideUpgrade,
  ownPartner,
  type RevokeState,
  TIER_RANK
} from "../../engine/domain/partners/decide-account.ts"
import {
  acceptCredit,
  activeKey,
  type ApiKeyRecord,
  checkCredit,
  confirmCredit,
  decideBootstrap,
  KEY_PREFIX,
  SANDBOX_SEED_CENTS
} from "../../engine/domain/partners/decide-partner.ts"
import { accepted, codeOf, OPEN_AT } from "./decider-fixtures.ts"

const ids = {
  partnerId: "ptn_1",
  sandboxKey: { raw: `${KEY_PREFIX.sandbox}aaaa1111`, hash: "h-sandbox" },
  liveKey: { raw: `${KEY_PREFIX.production}bbbb2222`, hash: "h-live" }
}
const boot = (tier: Tier = "starter") => decideBootstrap({ businessName: "Acme", email: "ops@acme.test", tier }, OPEN_AT, ids)
const TIERS = Object.keys(TIER_RANK) as ReadonlyArray<Tier>

describe("bootstrapping a partner", () => {
  it("an active partner, markup 0 unless given, with a sandbox and a live full key stored by hash", () => {
    const plan = boot("growth")
    expect(plan.partner).toEqual({ partnerId: "ptn_1", businessName: "Acme", email: "ops@acme.test", tier: "growth", markupBps: 0, createdAt: OPEN_AT })
    expect(plan.keys.map((k) => [k.environment, k.kind, k.status, k.keyHash, k.last4])).toEqual([
      ["sandbox", "full", "active", "h-sandbox", "1111"],
      ["production", "full", "active", "h-live", "2222"]
    ])
    expect(JSON.stringify(plan.keys)).not.toContain(ids.liveKey.raw)
    expect(plan.answer).toMatchObject({ sandboxKey: ids.sandboxKey.raw, liveKey: ids.liveKey.raw, tier: "growth" })
  })

  it("seeds the sandbox master wallet only", () => {
    expect(boot().seed).toEqual({ partition: "ptn_1:sandbox", cents: SANDBOX_SEED_CENTS })
  })
})

describe("the operator's top-up", () => {
  it("takes positive amounts with at most 2 decimals, as exact cents", () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 10_000_000_00 }), (cents) => checkCredit(cents / 100) === cents))
    for (const bad of [0, -5, 1.005, Number.NaN]) expect(codeOf(checkCredit(bad))).toBe("VALIDATION_ERROR")
  })

  it("refuses an unknown partner, and reports the posted balance", () => {
    expect(codeOf(acceptCredit(undefined, "ptn_x"))).toBe("NOT_FOUND")
    expect(acceptCredit(boot().partner, "ptn_1")).toBeUndefined()
    expect(confirmCredit(2_50, 1_002_50)).toEqual({
      event: { name: "wallet.credited", data: { amount: 2.5, newBalance: 1002.5, currency: "USD" } },
      answer: { newBalance: 1002.5 }
    })
  })
})

describe("upgrade requests", () => {
  const application = (status: ApplicationState["status"]): ApplicationState => ({
    status,
    businessName: "Acme",
    email: "e",
    submittedAt: 0,
    rejectionReason: null
  })

  it("a tier upgrade is accepted exactly when the target ranks above the account's tier", () => {
    fc.assert(
      fc.property(fc.constantFrom(...TIERS), fc.constantFrom(...TIERS), (current, target) => {
        const refused = acceptUpgrade(boot(current).partner, application("approved"), { targetTier: target })
        return (refused === undefined) === TIER_RANK[target] > TIER_RANK[current]
      })
    )
  })

  it("a request for live (no tier) only before approval", () => {
    const partner = boot().partner
    expect(codeOf(acceptUpgrade(partner, application("approved"), {}))).toBe("VALIDATION_ERROR")
    expect(acceptUpgrade(partner, application("pending"), {})).toBeUndefined()
    expect(acceptUpgrade(partner, undefined, {})).toBeUndefined()
  })

  it("files the request with its drawn id; the answer says which review follows", () => {
    const partner = boot().partner
    const live = decideUpgrade(partner, { uid: "uid_1", input: { message: "please" } }, OPEN_AT, { requestId: "upg_1" })
    expect(live.request).toEqual({ requestId: "upg_1", partnerId: "ptn_1", uid: "uid_1", targetTier: null, message: "please", createdAt: OPEN_AT })
    expect(live.answer.message).toContain("Sandbox-to-live")
    expect(decideUpgrade(partner, { uid: "uid_1", input: { targetTier: "enterprise" } }, OPEN_AT, { requestId: "upg_2" }).answer.message).toBe(
      "Upgrade to enterprise requested; you will be contacted."
    )
  })

  it("a member without a partner account is refused", () => {
    expect(codeOf(ownPartner(undefined))).toBe("FORBIDDEN")
  })
})

describe("revoking a production key", () => {
  const partner = boot().partner
  const live = (n: number): ApiKeyRecord => activeKey("ptn_1", "production", { raw: `pk_live_key${n}xxxx${n}${n}${n}${n}`, hash: `h-${n}` }, OPEN_AT + n)
  const state = (key: ApiKeyRecord | undefined, others: ReadonlyArray<ApiKeyRecord>, pointer?: string): RevokeState => ({
    partner,
    key,
    otherActive: others,
    pointer
  })
  const command = (key: ApiKeyRecord) => ({ keyHash: key.keyHash, revokedBy: "ops@acme.test" })

  it("another partner's, a sandbox and an unknown key are the same 404", () => {
    const theirs = { ...live(1), partnerId: "ptn_2" }
    expect(codeOf(decideRevoke(state(theirs, [live(2)]), command(theirs), OPEN_AT))).toBe("NOT_FOUND")
    expect(codeOf(decideRevoke(state(boot().keys[0], [live(2)]), { keyHash: "h-sandbox", revokedBy: "x" }, OPEN_AT))).toBe("NOT_FOUND")
    expect(codeOf(decideRevoke(state(undefined, [live(2)]), { keyHash: "h-none", revokedBy: "x" }, OPEN_AT))).toBe("NOT_FOUND")
  })

  it("never revokes the only active key, whatever else the partner has", () => {
    fc.assert(
      fc.property(fc.nat(5), (others) => {
        const keys = Array.from({ length: others }, (_, i) => live(i + 2))
        return (codeOf(decideRevoke(state(live(1), keys), command(live(1)), OPEN_AT)) === "FORBIDDEN") === (others === 0)
      })
    )
  })

  it("revokes, moves the pointer to the newest other key when it named this one, and tells receivers", () => {
    const plan = accepted(decideRevoke(state(live(1), [live(2), live(3)], "h-1"), command(live(1)), OPEN_AT))
    expect(plan.revoked?.status).toBe("revoked")
    expect(plan.pointTo).toBe("h-3")
    expect(plan.event?.data).toMatchObject({ frozen: true, revokedBy: "ops@acme.test", reason: "API key pk_live_****1111 revoked" })
    expect(plan.answer).toEqual({ message: "The API key is revoked.", apiKey: "pk_live_****1111" })
    expect(accepted(decideRevoke(state(live(1), [live(2)], "h-2"), command(live(1)), OPEN_AT)).pointTo).toBeUndefined()
  })

  it("revoking again answers the same and changes nothing", () => {
    const again = accepted(decideRevoke(state({ ...live(1), status: "revoked" }, []), command(live(1)), OPEN_AT))
    expect(again).toEqual({ answer: { message: "The API key is revoked.", apiKey: "pk_live_****1111" } })
  })
})
