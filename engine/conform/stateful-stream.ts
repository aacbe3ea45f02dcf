/**
 * The stream check of `sokoni conform` (issue 23, item 2): the event stream carries each event once, and a client
 * that reconnects with `Last-Event-ID` (as EventSource does after a cut) gets what came after that id, once, and
 * nothing before it. The events are two deposits to a sub-account of this run, so no market needs to be open.
 */
import type { RunContext } from "./conform.ts"
import { caller, codeOf, fundedSubAccount, partnerFor, type StatefulCheck, Verdict } from "./stateful-kit.ts"
import { SANDBOX_BASE, type SseMessage } from "./target.ts"

const STREAM_BOUND_MS = 10_000
const EVENTS = "deposit.confirmed"

/** Reads the stream (from the start, or after `lastEventId`) until `enough`, keeping the exchange. */
const read = async (ctx: RunContext, v: Verdict, key: string, enough: (m: ReadonlyArray<SseMessage>) => boolean, lastEventId?: string) => {
  const headers: Record<string, string> = { "x-api-key": key, ...(lastEventId === undefined ? {} : { "last-event-id": lastEventId }) }
  const path = `${SANDBOX_BASE}/stream?${lastEventId === undefined ? "since=0&" : ""}events=${EVENTS}`
  const got = await ctx.target.readStream(path, headers, enough, STREAM_BOUND_MS)
  v.keep(got.exchange)
  return got.messages
}

/** An id that came more than once in one connection, if any. */
const repeated = (messages: ReadonlyArray<SseMessage>) => messages.map((m) => m.id).find((id, i, ids) => id !== undefined && ids.indexOf(id) !== i)

export const streamResumption: StatefulCheck = {
  id: "stream-resumption",
  suite: "stateful: events",
  operation: "streamEvents",
  name: "stream-resumption: the stream carries each event once; reconnecting with Last-Event-ID resumes after that event, nothing repeated or lost",
  run: async (ctx) => {
    const v = new Verdict(ctx)
    const { key, call } = caller(ctx, v, await partnerFor(ctx))
    if (key === undefined) return v.skip("needs a sandbox key or --admin-token")
    const funded = await fundedSubAccount(ctx, call, "stream", 1)
    if ("problem" in funded) return v.fail(funded.problem)
    const second = await call("POST", `/users/${funded.id}/deposit`, { amount: 2, reference: "conform-stream-2" })
    if (second.status !== 200) return v.fail(`the second deposit answered ${second.status} ${codeOf(second) ?? ""}; expected 200`)
    const mine = (m: SseMessage) => (m.data as { data?: { subAccountId?: string } } | undefined)?.data?.subAccountId === funded.id
    const bothSeen = (messages: ReadonlyArray<SseMessage>) => messages.filter(mine).length >= 2
    const whole = await read(ctx, v, key, bothSeen)
    const [first, last] = whole.filter(mine)
    if (first?.id === undefined || last?.id === undefined)
      return v.fail(
        `the stream from the start carried ${whole.filter(mine).length} of the 2 deposit.confirmed events of sub-account ${funded.id} within ${STREAM_BOUND_MS / 1000} s`
      )
    const twice = repeated(whole)
    if (twice !== undefined) return v.fail(`one connection to the stream carried event id ${twice} more than once`)
    // The client was cut after the first deposit's event: it reconnects with that id.
    const resumed = await read(ctx, v, key, (messages) => messages.some((m) => m.id === last.id) || repeated(messages) !== undefined, first.id)
    const early = resumed.find((m) => Number(m.id) <= Number(first.id))
    if (early !== undefined)
      return v.fail(`resumed with Last-Event-ID ${first.id}, the stream sent event ${early.id} again (at or before the one the client had)`)
    const again = repeated(resumed)
    if (again !== undefined) return v.fail(`resumed with Last-Event-ID ${first.id}, the stream carried event id ${again} more than once`)
    if (!resumed.some((m) => m.id === last.id))
      return v.fail(`resumed with Last-Event-ID ${first.id}, the stream never carried event ${last.id} that came after it`)
    return v.pass()
  }
}
