/**
 * The idempotency checks of `sokoni conform`: the same Idempotency-Key and body replay the first answer, another body
 * is refused, and a burst of one key creates one thing. Owns their oracles; the shared pieces are stateful-kit.ts.
 */
import { caller, codeOf, partnerFor, type StatefulCheck, subAccountBody, Verdict } from "./stateful-kit.ts"
import { SANDBOX_BASE } from "./target.ts"

/** idempotency-replay: the same key and body answer the first answer again, marked replayed, and create nothing new. */
export const idempotencyReplay: StatefulCheck = {
  id: "idempotency-replay",
  suite: "stateful: idempotency",
  operation: "createSubAccount",
  name: "idempotency-replay: the same Idempotency-Key and body answer the first 201 again (Idempotent-Replayed: true), creating one sub-account",
  run: async (ctx) => {
    const v = new Verdict(ctx)
    const { key, call } = caller(ctx, v, await partnerFor(ctx))
    if (key === undefined) return v.skip("needs a sandbox key or --admin-token")
    const idem = { "idempotency-key": `conform-replay-${ctx.seed}-${await ctx.target.nowOnTarget()}` }
    const body = subAccountBody(ctx, "replay")
    const first = await call("POST", "/users", body, idem)
    if (first.status !== 201) return v.fail(`POST /users answered ${first.status} ${codeOf(first) ?? ""}; expected 201`)
    const again = await call("POST", "/users", body, idem)
    if (again.status !== first.status || again.text !== first.text)
      return v.fail(`the replay answered ${again.status} ${again.text.slice(0, 120)}; expected the first answer again (${first.status}, same body)`)
    if (again.responseHeaders.get("idempotent-replayed") !== "true") return v.fail("the replay lacks Idempotent-Replayed: true")
    return v.pass()
  }
}

/** idempotency-different-body: the same key with another body is refused (422 IDEMPOTENCY_KEY_REUSED, D-190). */
export const idempotencyDifferentBody: StatefulCheck = {
  id: "idempotency-different-body",
  suite: "stateful: idempotency",
  operation: "createSubAccount",
  name: "idempotency-different-body: the same Idempotency-Key with a different body is refused with 422 IDEMPOTENCY_KEY_REUSED",
  run: async (ctx) => {
    const v = new Verdict(ctx)
    const { key, call } = caller(ctx, v, await partnerFor(ctx))
    if (key === undefined) return v.skip("needs a sandbox key or --admin-token")
    const idem = { "idempotency-key": `conform-reuse-${ctx.seed}-${await ctx.target.nowOnTarget()}` }
    const first = await call("POST", "/users", subAccountBody(ctx, "reuse-a"), idem)
    if (first.status !== 201) return v.fail(`POST /users answered ${first.status} ${codeOf(first) ?? ""}; expected 201`)
    const other = await call("POST", "/users", subAccountBody(ctx, "reuse-b"), idem)
    if (other.status !== 422 || codeOf(other) !== "IDEMPOTENCY_KEY_REUSED")
      return v.fail(`the same key with another body was answered ${other.status} ${codeOf(other) ?? ""}; expected 422 IDEMPOTENCY_KEY_REUSED`)
    return v.pass()
  }
}

/**
 * idempotency-concurrent: a burst of one key and body sent at once creates exactly one sub-account; every other
 * answer is 409 CONFLICT (still in flight) or the replay of the one 201.
 */
export const idempotencyConcurrent: StatefulCheck = {
  id: "idempotency-concurrent",
  suite: "stateful: idempotency",
  operation: "createSubAccount",
  name: "idempotency-concurrent: 8 requests with one Idempotency-Key at once create one sub-account; the others get 409 CONFLICT or its replay",
  run: async (ctx) => {
    const v = new Verdict(ctx)
    const who = await partnerFor(ctx)
    if (who.sandboxKey === undefined) return v.skip("needs a sandbox key or --admin-token")
    const headers = { "x-api-key": who.sandboxKey, "idempotency-key": `conform-burst-${ctx.seed}-${await ctx.target.nowOnTarget()}` }
    const body = subAccountBody(ctx, "burst")
    const answers = await Promise.all(Array.from({ length: 8 }, () => ctx.target.call("POST", `${SANDBOX_BASE}/users`, { headers, body })))
    for (const a of answers) v.keep(a)
    const created = answers.filter((a) => a.status === 201 && a.responseHeaders.get("idempotent-replayed") !== "true")
    if (created.length !== 1)
      return v.fail(`${created.length} answers were a fresh 201 (not replayed); exactly one request may create`, created[1] ?? answers[0])
    const id = (created[0]?.json as { subAccountId?: string } | undefined)?.subAccountId
    const odd = answers.find(
      (a) => !(a.status === 409 && codeOf(a) === "CONFLICT") && !(a.status === 201 && (a.json as { subAccountId?: string }).subAccountId === id)
    )
    if (odd !== undefined)
      return v.fail(`an answer in the burst was ${odd.status} ${odd.text.slice(0, 120)}; expected 409 CONFLICT or the replay of ${id}`, odd)
    return v.pass(`${answers.filter((a) => a.status === 409).length} of 8 were 409 CONFLICT`)
  }
}
