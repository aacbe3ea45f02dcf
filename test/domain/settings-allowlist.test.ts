/**
 * Partner settings (domain/settings/decide-settings.ts): a patch is accepted exactly when every ipAllowlist entry is
 * an address or a CIDR range (the first bad one named, param ipAllowlist); an environment's settings before the first
 * change are the partner's markup, no address and an empty allowlist dated at the partner's creation; a change
 * replaces only the fields it gives (null clears the address) and is dated now; an unknown partner is 404; and an
 * allowlist once saved admits exactly the addresses inside its ranges (domain/cidr.ts, what the gateway enforces).
 */
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { addressAllowed, isCidr } from "../../engine/domain/cidr.ts"
import { ApiFailure } from "../../engine/domain/errors.ts"
import {
  checkSettingsPatch,
  decideSettingsUpdate,
  defaultSettings,
  type SettingsPatch,
  type SettingsRecord,
  type SettingsState,
  settingsAnswer
} from "../../engine/domain/settings/decide-settings.ts"
import { accepted, codeOf } from "./decider-fixtures.ts"

const CREATED = Date.parse("2026-11-02T08:00:00.000Z")
const NOW = Date.parse("2026-11-23T10:00:00.000Z")
const partner = { partnerId: "ptn_1", businessName: "Acme", tier: "growth" as const, markupBps: 75, createdAt: CREATED }
const state = (over: Partial<SettingsState> = {}): SettingsState => ({ partner, environment: "sandbox", saved: undefined, oauthEnabled: false, ...over })
const paramOf = (value: unknown) => (value instanceof ApiFailure ? value.extras?.param : undefined)

const octet = fc.integer({ min: 0, max: 255 })
const v4 = fc.tuple(octet, octet, octet, octet).map((o) => o.join("."))
const range = fc.tuple(v4, fc.integer({ min: 0, max: 32 })).map(([a, p]) => `${a}/${p}`)
const junk = fc.constantFrom("300.1.1.1", "10.0.0.0/33", "hello", "10.0.0.0/8/1", "1:2:3", "", "10.0.0.1/")

describe("the allowlist a patch may give", () => {
  it("is accepted exactly when every entry is an address or a CIDR range", () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(v4, range, junk), { maxLength: 6 }), (entries) => {
        const checked = checkSettingsPatch({ ipAllowlist: entries })
        const firstBad = entries.find((e) => !isCidr(e))
        if (firstBad === undefined) expect(checked).toEqual({ ipAllowlist: entries })
        else {
          expect([codeOf(checked), paramOf(checked)]).toEqual(["VALIDATION_ERROR", "ipAllowlist"])
          expect((checked as ApiFailure).message).toContain(`"${firstBad}"`)
        }
      })
    )
  })

  it("leaves a patch without an allowlist alone", () => {
    const patch: SettingsPatch = { markupBps: 10, notificationEmail: null }
    expect(checkSettingsPatch(patch)).toBe(patch)
  })

  it("once saved, admits exactly the IPv4 addresses inside one of its ranges", () => {
    fc.assert(
      fc.property(fc.array(range, { minLength: 1, maxLength: 4 }), v4, (ranges, address) => {
        const plan = accepted(decideSettingsUpdate(state(), accepted(checkSettingsPatch({ ipAllowlist: ranges })), NOW))
        const bits = (a: string) =>
          a
            .split(".")
            .map((o) => Number(o).toString(2).padStart(8, "0"))
            .join("")
        const inside = ranges.some((r) => {
          const [network = "", prefix = "0"] = r.split("/")
          return bits(address).slice(0, Number(prefix)) === bits(network).slice(0, Number(prefix))
        })
        expect(addressAllowed(address, plan.settings.ipAllowlist)).toBe(inside)
      }),
      { numRuns: 300 }
    )
  })
})

describe("an environment's settings", () => {
  it("before the first change are the partner's markup, no address, anyone allowed, as of its creation", () => {
    expect(defaultSettings(partner)).toEqual({ markupBps: 75, notificationEmail: null, ipAllowlist: [], updatedAt: CREATED })
    expect(accepted(settingsAnswer(state({ environment: "production", oauthEnabled: true })))).toEqual({
      partnerId: "ptn_1",
      businessName: "Acme",
      tier: "growth",
      environment: "production",
      markupBps: 75,
      notificationEmail: null,
      oauthEnabled: true,
      ipAllowlist: [],
      updatedAt: "2026-11-02T08:00:00.000Z"
    })
  })

  it("answer what is saved once changed", () => {
    const saved: SettingsRecord = { markupBps: 5, notificationEmail: "ops@example.com", ipAllowlist: ["10.0.0.0/8"], updatedAt: NOW }
    expect(accepted(settingsAnswer(state({ saved })))).toMatchObject({ markupBps: 5, notificationEmail: "ops@example.com", ipAllowlist: ["10.0.0.0/8"] })
  })

  it("are 404 NOT_FOUND when the partner is not on file", () => {
    expect(codeOf(settingsAnswer(state({ partner: undefined })))).toBe("NOT_FOUND")
    expect(codeOf(decideSettingsUpdate(state({ partner: undefined }), { markupBps: 1 }, NOW))).toBe("NOT_FOUND")
  })
})

describe("a change", () => {
  const saved: SettingsRecord = { markupBps: 5, notificationEmail: "ops@example.com", ipAllowlist: ["10.0.0.0/8"], updatedAt: CREATED }
  const patch = fc.record(
    {
      markupBps: fc.integer({ min: 0, max: 500 }),
      notificationEmail: fc.option(fc.constantFrom("a@example.com", "b@example.com"), { nil: null }),
      ipAllowlist: fc.array(range, { maxLength: 3 })
    },
    { requiredKeys: [] }
  )

  it("replaces the fields it gives, keeps the others, and is dated now", () => {
    fc.assert(
      fc.property(fc.boolean(), patch, (wasSaved, p) => {
        const before = wasSaved ? saved : defaultSettings(partner)
        const plan = accepted(decideSettingsUpdate(state({ saved: wasSaved ? saved : undefined }), p, NOW))
        expect(plan.settings).toEqual({
          markupBps: "markupBps" in p ? p.markupBps : before.markupBps,
          notificationEmail: "notificationEmail" in p ? p.notificationEmail : before.notificationEmail,
          ipAllowlist: "ipAllowlist" in p ? p.ipAllowlist : before.ipAllowlist,
          updatedAt: NOW
        })
        expect(plan.answer).toMatchObject({
          markupBps: plan.settings.markupBps,
          ipAllowlist: [...plan.settings.ipAllowlist],
          updatedAt: "2026-11-23T10:00:00.000Z"
        })
      })
    )
  })

  it("clears the notification address with null", () => {
    expect(accepted(decideSettingsUpdate(state({ saved }), { notificationEmail: null }, NOW)).settings.notificationEmail).toBeNull()
  })
})
