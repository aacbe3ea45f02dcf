/**
 * The isolation and resource checks of `sokoni conform`: another partner's sub-account is invisible, a deposit touches
 * only its sub-account, and a deleted webhook is gone. Owns their oracles; the shared pieces are stateful-kit.ts.
 */
import { caller, cents, codeOf, partnerFor, type StatefulCheck, subAccountBody, Verdict, walletOf } from "./stateful-kit.ts"

/** cross-partner-access: another partner's sub-account is invisible (404), never readable or writable. */
export const crossPartner: StatefulCheck = {
  id: "cross-partner-access",
  suite: "stateful: isolation",
  operation: "getSubAccount",
  name: "cross-partner-access: a partner asking for another partner's sub-account gets 404 NOT_FOUND, and cannot deposit to it",
  run: async (ctx) => {
    const v = new Verdict(ctx)
    if (!ctx.target.hasControl) return v.skip("needs two partners: --admin-token")
    const a = caller(ctx, v, await partnerFor(ctx))
    const b = caller(ctx, v, await partnerFor(ctx))
    const made = await a.call("POST", "/users", subAccountBody(ctx, "isolated"))
    const userId = (made.json as { subAccountId?: string }).subAccountId
    if (made.status !== 201 || userId === undefined) return v.fail(`POST /users answered ${made.status}`)
    const read = await b.call("GET", `/users/${userId}`)
    if (read.status !== 404) return v.fail(`partner B reading partner A's sub-account ${userId} was answered ${read.status}; expected 404`, read)
    const deposit = await b.call("POST", `/users/${userId}/deposit`, { amount: 1 })
    if (deposit.status !== 404) return v.fail(`partner B depositing to partner A's sub-account was answered ${deposit.status}; expected 404`, deposit)
    return v.pass()
  }
}

/**
 * resource-lifecycle: a created webhook is listed at once; once deleted, it is gone (404 on its test delivery and on a
 * second delete) and no longer listed.
 */
export const resourceLifecycle: StatefulCheck = {
  id: "resource-lifecycle",
  suite: "stateful: resources",
  operation: "deleteWebhook",
  name: "resource-lifecycle: a created webhook is available at once (listed); after DELETE it is gone (404 on use and on a second delete)",
  run: async (ctx) => {
    const v = new Verdict(ctx)
    const { key, call } = caller(ctx, v, await partnerFor(ctx))
    if (key === undefined) return v.skip("needs a sandbox key or --admin-token")
    const created = await call("POST", "/webhooks", {
      url: "https://hooks.conform.example/lifecycle",
      events: ["order.filled"],
      secret: `whsec_conform_${ctx.seed}_lifecycle`
    })
    const id = (created.json as { id?: string }).id
    if (created.status !== 201 || id === undefined) return v.fail(`POST /webhooks answered ${created.status} ${codeOf(created) ?? ""}; expected 201`)
    const listed = await call("GET", "/webhooks")
    const ids = () => ((listed.json as { webhooks?: Array<{ id: string }> }).webhooks ?? []).map((w) => w.id)
    if (listed.status !== 200 || !ids().includes(id)) return v.fail(`webhook ${id} was created but GET /webhooks does not list it`, listed)
    const deleted = await call("DELETE", `/webhooks/${id}`)
    if (deleted.status !== 200 && deleted.status !== 204) return v.fail(`DELETE /webhooks/${id} answered ${deleted.status}; expected 200`)
    const used = await call("POST", `/webhooks/${id}/test`, {})
    if (used.status !== 404) return v.fail(`a test delivery on deleted webhook ${id} was answered ${used.status}; expected 404`, used)
    const again = await call("DELETE", `/webhooks/${id}`)
    if (again.status !== 404) return v.fail(`a second DELETE of webhook ${id} was answered ${again.status}; expected 404`, again)
    const after = await call("GET", "/webhooks")
    if (((after.json as { webhooks?: Array<{ id: string }> }).webhooks ?? []).some((w) => w.id === id))
      return v.fail(`deleted webhook ${id} is still listed`, after)
    return v.pass()
  }
}

/**
 * sub-account-isolation: money moved to one sub-account is in its wallet only: the master wallet gives exactly that
 * amount, the other sub-account's wallet and transactions are untouched.
 */
export const subAccountIsolation: StatefulCheck = {
  id: "sub-account-isolation",
  suite: "stateful: isolation",
  operation: "depositToSubAccount",
  name: "sub-account-isolation: a deposit to one sub-account moves exactly its amount out of the master wallet and touches no other sub-account",
  run: async (ctx) => {
    const v = new Verdict(ctx)
    const { key, call } = caller(ctx, v, await partnerFor(ctx))
    if (key === undefined) return v.skip("needs a sandbox key or --admin-token")
    const make = async (n: string) => {
      const r = await call("POST", "/users", subAccountBody(ctx, n))
      return r.status === 201 ? (r.json as { subAccountId?: string }).subAccountId : undefined
    }
    const a = await make("iso-a")
    const b = await make("iso-b")
    if (a === undefined || b === undefined) return v.fail("POST /users did not create two sub-accounts (201)")
    const master0 = walletOf(await call("GET", "/wallet"))
    const deposit = await call("POST", `/users/${a}/deposit`, { amount: 50, reference: "conform-isolation" })
    if (deposit.status !== 200) return v.fail(`POST /users/${a}/deposit answered ${deposit.status} ${codeOf(deposit) ?? ""}; expected 200`)
    const master1x = await call("GET", "/wallet")
    const master1 = walletOf(master1x)
    if (master1.balance !== master0.balance - 5_000)
      return v.fail(
        `the master wallet went from ${master0.balance / 100} to ${master1.balance / 100} for a 50.00 deposit to a sub-account; expected ${(master0.balance - 5_000) / 100}`,
        master1x
      )
    const balanceOf = async (id: string) => {
      const r = await call("GET", `/users/${id}`)
      return { r, cents: cents((r.json as { walletBalance?: number }).walletBalance) }
    }
    const inA = await balanceOf(a)
    if (inA.cents !== 5_000) return v.fail(`sub-account ${a} holds ${inA.cents / 100} after a 50.00 deposit; expected 50`, inA.r)
    const inB = await balanceOf(b)
    if (inB.cents !== 0) return v.fail(`sub-account ${b} holds ${inB.cents / 100} after a deposit to ${a}; expected 0`, inB.r)
    const txB = await call("GET", `/users/${b}/transactions`)
    const rows = (txB.json as { transactions?: Array<unknown> }).transactions
    if (txB.status !== 200 || (rows?.length ?? 0) !== 0)
      return v.fail(`sub-account ${b} lists ${rows?.length} transactions after a deposit to ${a}; expected none`, txB)
    return v.pass()
  }
}
