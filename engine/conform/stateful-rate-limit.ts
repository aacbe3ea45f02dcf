/**
 * The rate-limit oracle of `sokoni conform`: which request of a window is the first 429, and the headers every answer
 * of the window must carry. Owns the oracle; the shared pieces are stateful-kit.ts.
 */
import type { RunContext } from "./conform.ts"
import type { Credentials } from "./contract-checks.ts"
import { codeOf, type StatefulCheck, Verdict } from "./stateful-kit.ts"
import { PRODUCTION_BASE, rateOf, SANDBOX_BASE } from "./target.ts"

/**
 * rate-limit-oracle: from the first answer of a fresh window, the exact request that must be the first 429 and what
 * every answer must carry: Limit constant, Remaining one less each time, Reset fixed at the window's first request
 * + 60 s (rounded up to the second), and the 429's Remaining 0, RATE_LIMITED and a Retry-After that reaches Reset.
 */
export const rateLimitOracle: StatefulCheck = {
  id: "rate-limit-oracle",
  suite: "stateful: rate limit",
  operation: "getMasterWallet",
  name: "rate-limit-oracle: the first 429 is exactly request limit + 1 of the window, with the X-RateLimit-Remaining, Reset and Retry-After the window implies",
  run: async (ctx) => {
    const v = new Verdict(ctx)
    // A starter partner's production window (100) with the control API; else the sandbox key's window as it stands.
    const made = ctx.target.hasControl ? await makeStarter(ctx) : undefined
    const env = made !== undefined ? "production" : "sandbox"
    const key = made?.liveKey ?? ctx.credentials.sandboxKey
    if (key === undefined) return v.skip("needs a sandbox key or --admin-token")
    const path = `${env === "production" ? PRODUCTION_BASE : SANDBOX_BASE}/wallet`
    const get = () => ctx.target.call("GET", path, { headers: { "x-api-key": key } })
    const before = await ctx.target.nowOnTarget()
    const first = v.keep(await get())
    const after = await ctx.target.nowOnTarget()
    const rate = rateOf(first.responseHeaders)
    if (first.status !== 200 || rate === undefined) return v.fail(`the first request was answered ${first.status} without integer X-RateLimit-* headers`)
    if (made !== undefined && rate.remaining !== rate.limit - 1)
      return v.fail(`a fresh partner's first request carries X-RateLimit-Remaining ${rate.remaining}; expected ${rate.limit - 1} (limit ${rate.limit})`)
    if (made !== undefined) {
      const lo = Math.ceil((before + 60_000) / 1000)
      const hi = Math.ceil((after + 60_000) / 1000)
      if (rate.reset < lo || rate.reset > hi)
        return v.fail(
          `X-RateLimit-Reset ${rate.reset} of a fresh window's first request; expected ${lo === hi ? lo : `${lo}..${hi}`} (its instant + 60 s, rounded up)`
        )
    }
    // Remaining r means r more requests are admitted; the next one is the first 429.
    for (let i = 1; i <= rate.remaining; i++) {
      const x = await get()
      const r = rateOf(x.responseHeaders)
      const expected = rate.remaining - i
      if (x.status !== 200 || r === undefined || r.remaining !== expected || r.limit !== rate.limit || r.reset !== rate.reset) {
        v.keep(x)
        return v.fail(
          `request ${i + 1} of the window was answered ${x.status} with Limit ${r?.limit} Remaining ${r?.remaining} Reset ${r?.reset}; expected 200 with Limit ${rate.limit} Remaining ${expected} Reset ${rate.reset}`,
          x
        )
      }
      if (i === rate.remaining) v.keep(x)
    }
    const limited = v.keep(await get())
    const at = await ctx.target.nowOnTarget()
    const r = rateOf(limited.responseHeaders)
    const n = rate.remaining + 2
    if (limited.status !== 429 || codeOf(limited) !== "RATE_LIMITED")
      return v.fail(`request ${n} of the window (limit ${rate.limit}) was answered ${limited.status}; expected the first 429 RATE_LIMITED`, limited)
    if (r === undefined || r.remaining !== 0 || r.reset !== rate.reset || r.limit !== rate.limit)
      return v.fail(
        `the 429 carries Limit ${r?.limit} Remaining ${r?.remaining} Reset ${r?.reset}; expected Limit ${rate.limit} Remaining 0 Reset ${rate.reset}`,
        limited
      )
    const retryAfter = Number(limited.responseHeaders.get("retry-after"))
    const due = rate.reset - Math.floor(at / 1000)
    if (!Number.isInteger(retryAfter) || retryAfter < 1 || retryAfter < due - 1 || retryAfter > due + 1)
      return v.fail(`the 429's Retry-After is ${limited.responseHeaders.get("retry-after")}; expected about ${due} s (until Reset ${rate.reset})`, limited)
    return v.pass(`request ${n} was the first 429, as the window implies`)
  }
}

const makeStarter = async (ctx: RunContext): Promise<Credentials | undefined> => {
  const r = await ctx.target.admin("POST", "/_sim/partners", { businessName: "Conform Starter", email: `starter-${ctx.seed}@conform.test`, tier: "starter" })
  return r.status === 201 ? (r.json as Credentials) : undefined
}
