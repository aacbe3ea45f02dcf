/**
 * The event checks of `sokoni conform`: a webhook's signature is over the exact bytes sent, and one order's story
 * agrees as REST, the webhooks and the stream tell it. Owns their oracles; the shared pieces are stateful-kit.ts.
 */
import { createHmac, timingSafeEqual } from "node:crypto"
import { startReceiver } from "./receiver.ts"
import { caller, codeOf, forgetWebhook, partnerFor, quoteOf, type StatefulCheck, SYMBOL, Verdict, tradingCaller } from "./stateful-kit.ts"
import { SANDBOX_BASE } from "./target.ts"

/**
 * webhook-signature: a test delivery to a receiver conform runs on 127.0.0.1 carries x-service-signature = hex
 * HMAC-SHA256 of the exact bytes received, keyed with the secret registered.
 */
export const webhookSignature: StatefulCheck = {
  id: "webhook-signature",
  suite: "stateful: webhooks",
  operation: "testWebhook",
  name: "webhook-signature: a delivery's x-service-signature is the HMAC-SHA256 of the exact bytes received (not of re-serialised JSON)",
  run: async (ctx) => {
    const v = new Verdict(ctx)
    const { key, call } = caller(ctx, v, await partnerFor(ctx))
    if (key === undefined) return v.skip("needs a sandbox key or --admin-token")
    const receiver = await startReceiver(ctx.target.recordDelivery)
    let id: string | undefined
    try {
      const secret = `whsec_conform_${ctx.seed}_secret`
      const created = await call("POST", "/webhooks", { url: receiver.url, events: ["order.pending", "order.filled"], secret })
      id = (created.json as { id?: string }).id
      if (created.status !== 201 || id === undefined) return v.fail(`POST /webhooks answered ${created.status} ${codeOf(created) ?? ""}; expected 201`)
      const tested = await call("POST", `/webhooks/${id}/test`, {})
      const got = receiver.received()
      const delivery = got[0]
      if (delivery === undefined) return v.fail(`POST /webhooks/${id}/test answered ${tested.status} but no delivery reached ${receiver.url}`, tested)
      v.note(`delivery received: ${delivery.body.slice(0, 160)}`, await ctx.target.nowOnTarget(), "delivery")
      const given = Buffer.from(delivery.signature ?? "", "hex")
      const expected = createHmac("sha256", secret).update(delivery.raw).digest()
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
        const reserialised = createHmac("sha256", secret)
          .update(JSON.stringify(JSON.parse(delivery.body)))
          .digest("hex")
        return v.fail(
          `x-service-signature ${delivery.signature ?? "(missing)"} is not the HMAC of the ${delivery.raw.length} bytes received${reserialised === delivery.signature ? "; it is the HMAC of the re-serialised JSON" : ""}`,
          tested
        )
      }
      return v.pass()
    } finally {
      await forgetWebhook(call, id)
      await receiver.close()
    }
  }
}

interface EventEnvelope {
  readonly eventId?: string
  readonly event?: string
  readonly data?: { readonly orderId?: string }
}

/**
 * event-agreement: one order's story told three ways agrees: the REST order's status, the webhook deliveries a
 * loopback receiver got, and the event stream replayed from the start carry the same events, with the same eventIds,
 * in the same order.
 */
export const eventAgreement: StatefulCheck = {
  id: "event-agreement",
  suite: "stateful: events",
  operation: "streamEvents",
  name: "event-agreement: REST order state, webhook deliveries and the SSE stream tell one order's events alike (same eventIds, same order)",
  run: async (ctx) => {
    const v = new Verdict(ctx)
    const trading = await tradingCaller(ctx, v)
    if ("skip" in trading) return v.skip(trading.skip)
    const { key, call } = trading
    const receiver = await startReceiver(ctx.target.recordDelivery)
    let hookId: string | undefined
    try {
      const events = ["order.pending", "order.filled", "trade.settled"]
      const hook = await call("POST", "/webhooks", { url: receiver.url, events, secret: `whsec_conform_${ctx.seed}_agreement` })
      hookId = (hook.json as { id?: string } | null)?.id
      if (hook.status !== 201) return v.fail(`POST /webhooks answered ${hook.status}; expected 201`)
      const q = await call("GET", `/quote/${SYMBOL}?side=BUY&quantity=3`)
      const t = await call("POST", "/trade", { symbol: SYMBOL, type: "BUY", quantity: 3, quoteId: quoteOf(q).quoteId })
      const orderId = (t.json as { orderId?: string }).orderId
      if (t.status !== 202 || orderId === undefined) return v.fail(`the trade was answered ${t.status} ${codeOf(t) ?? ""}; expected 202`)
      let expectedStatus = "PENDING"
      let expected = ["order.pending"]
      if (ctx.target.hasControl) {
        const fill = v.keep(await ctx.target.admin("POST", `/_sim/desk/orders/${orderId}/fill`, {}))
        if (fill.status === 200) {
          expectedStatus = "FILLED"
          expected = events
        }
      }
      // Deliveries leave on the target's scheduler: let a second pass (virtual with a control API).
      await ctx.target.wait(1_000, `the deliveries of order ${orderId} to leave`)
      const listed = await call("GET", `/orders?status=${expectedStatus}`)
      const rest = ((listed.json as { orders?: Array<{ orderId: string; canonicalStatus?: string; status?: string }> }).orders ?? []).find(
        (o) => o.orderId === orderId
      )
      if (rest === undefined) return v.fail(`GET /orders?status=${expectedStatus} does not list order ${orderId}`, listed)
      const mine = (e: EventEnvelope) => e.data?.orderId === orderId
      const deliveredNow = () =>
        receiver
          .received()
          .map((d) => {
            try {
              return JSON.parse(d.body) as EventEnvelope
            } catch {
              return {}
            }
          })
          .filter(mine)
      // A delivery in flight arrives in real time (the target's outbound call): give it up to 5 s, only if missing.
      for (let i = 0; i < 25 && deliveredNow().length < expected.length; i++) await ctx.target.pause(200)
      // Webhooks promise no order between events (each delivery is its own call, retried on its own): arrival order
      // is not checked, only which events came, so they are put in the order the events happened.
      const delivered = [...deliveredNow()].sort((a, b) => expected.indexOf(a.event ?? "") - expected.indexOf(b.event ?? ""))
      for (const d of delivered) v.note(`webhook ${d.event} ${d.eventId}`, await ctx.target.nowOnTarget(), "delivery")
      const webhookNames = delivered.map((d) => d.event)
      if (JSON.stringify(webhookNames) !== JSON.stringify(expected))
        return v.fail(
          `the receiver got ${JSON.stringify(webhookNames)} for order ${orderId} (REST says ${expectedStatus}); expected ${JSON.stringify(expected)}`
        )
      const stream = await ctx.target.readStream(
        `${SANDBOX_BASE}/stream?since=0`,
        { "x-api-key": key },
        (messages) => expected.every((name) => messages.some((m) => (m.data as EventEnvelope | undefined)?.event === name && mine(m.data as EventEnvelope))),
        10_000
      )
      v.keep(stream.exchange)
      const streamed = stream.messages.map((m) => m.data as EventEnvelope).filter((e) => e !== undefined && mine(e))
      for (const e of streamed) v.note(`stream ${e.event} ${e.eventId}`, await ctx.target.nowOnTarget(), "event")
      const pairs = (list: ReadonlyArray<EventEnvelope>) => list.map((e) => `${e.event} ${e.eventId}`)
      if (JSON.stringify(pairs(streamed)) !== JSON.stringify(pairs(delivered)))
        return v.fail(
          `the stream carried ${JSON.stringify(pairs(streamed))} for order ${orderId}; the webhooks carried ${JSON.stringify(pairs(delivered))}`,
          stream.exchange
        )
      return v.pass(`${expected.length} events agree (order ${expectedStatus})`)
    } finally {
      await forgetWebhook(call, hookId)
      await receiver.close()
    }
  }
}
