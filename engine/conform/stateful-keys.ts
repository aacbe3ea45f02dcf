/**
 * The key-kind check of `sokoni conform` (issue 23, item 2): each base takes its own kind of key only. A sandbox key
 * on the production base would let a test integration move real money; a live key on the sandbox base would let a
 * production system run against virtual balances unnoticed. Needs both keys (the control API makes them, else
 * `--sandbox-key` and `--live-key`); reads only (GET /wallet), so it moves nothing on a live target.
 */
import { codeOf, partnerFor, type StatefulCheck, Verdict } from "./stateful-kit.ts"
import { PRODUCTION_BASE, SANDBOX_BASE } from "./target.ts"

/** key-kinds: a sandbox key on the production base and a live key on the sandbox base are refused (401 AUTH_INVALID). */
export const keyKinds: StatefulCheck = {
  id: "key-kinds",
  suite: "stateful: keys",
  operation: "getMasterWallet",
  name: "key-kinds: a sandbox key on the production base, and a live key on the sandbox base, are refused with 401 AUTH_INVALID",
  run: async (ctx) => {
    const v = new Verdict(ctx)
    const who = await partnerFor(ctx)
    if (who.sandboxKey === undefined || who.liveKey === undefined)
      return v.skip("needs both a sandbox and a live key (--sandbox-key and --live-key) or --admin-token")
    const wallet = (base: string, key: string) => ctx.target.call("GET", `${base}/wallet`, { headers: { "x-api-key": key } }).then((x) => v.keep(x))
    // Each key works on its own base first: a refusal below then says the base refused the kind, not the key.
    for (const [base, key, kind] of [
      [SANDBOX_BASE, who.sandboxKey, "sandbox"],
      [PRODUCTION_BASE, who.liveKey, "live"]
    ] as const) {
      const own = await wallet(base, key)
      if (own.status !== 200)
        return v.fail(`the ${kind} key on its own base (GET ${base}/wallet) was answered ${own.status} ${codeOf(own) ?? ""}; expected 200`)
    }
    for (const [base, key, kind, other] of [
      [PRODUCTION_BASE, who.sandboxKey, "sandbox", "production"],
      [SANDBOX_BASE, who.liveKey, "live", "sandbox"]
    ] as const) {
      const crossed = await wallet(base, key)
      if (crossed.status !== 401 || codeOf(crossed) !== "AUTH_INVALID")
        return v.fail(
          `a ${kind} key on the ${other} base (GET ${base}/wallet) was answered ${crossed.status}${codeOf(crossed) === undefined ? "" : ` ${codeOf(crossed)}`}; expected 401 AUTH_INVALID${crossed.status === 200 ? ": the key works where it must not" : ""}`,
          crossed
        )
    }
    return v.pass()
  }
}
