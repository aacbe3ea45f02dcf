/**
 * A naive webhook receiver: it works against the engine on a good day and fails `sokoni webhooks check` on
 * purpose, with faults seen in real integrations (test/conform/webhook-receiver-check.test.ts names the checks):
 * - it verifies the signature over `JSON.stringify(JSON.parse(body))` instead of the bytes received, so it refuses a
 *   valid delivery whose bytes are not its own serialisation and accepts a body changed in an insignificant byte;
 *   and it compares with `===`, not in constant time (not observable over the wire);
 * - it has no deduplication: a repeated eventId is applied twice (not observable over the wire either: it still
 *   answers 200, which is the limit the checker's report states);
 * - it treats the order lifecycle as a strict state machine and answers 409 to order.pending after order.filled,
 *   so a reordered delivery is refused and retried until it gives up.
 * Do not copy it; receiver-correct.ts is the one to copy.
 *
 * Run it: `SOKONI_WEBHOOK_SECRET=whsec_x PORT=4021 node contracts/examples/receiver-naive.ts`
 */
import { createHmac } from "node:crypto"
import { createServer } from "node:http"
import { listen, type Receiver } from "./receiver-correct.ts"

export const startNaiveReceiver = (secret: string, port = 0): Promise<Receiver> => {
  const orders = new Map<string, string>()
  const applied: Array<{ eventId: string; event: string }> = []
  const server = createServer((request, response) => {
    let text = ""
    request.setEncoding("utf8")
    request.on("data", (chunk: string) => {
      text += chunk
    })
    request.on("end", () => {
      let envelope: { eventId: string; event: string; data?: { orderId?: string; status?: string } }
      try {
        envelope = JSON.parse(text)
      } catch {
        response.writeHead(400).end()
        return
      }
      const expected = createHmac("sha256", secret).update(JSON.stringify(envelope)).digest("hex")
      if (expected !== request.headers["x-service-signature"]) {
        response.writeHead(401).end()
        return
      }
      const orderId = envelope.data?.orderId
      if (orderId !== undefined && envelope.data?.status === "PENDING" && orders.get(orderId) === "FILLED") {
        response.writeHead(409, { "content-type": "application/json" }).end('{"error":"illegal transition FILLED -> PENDING"}')
        return
      }
      if (orderId !== undefined && envelope.data?.status !== undefined) orders.set(orderId, envelope.data.status)
      applied.push({ eventId: envelope.eventId, event: envelope.event })
      response.writeHead(200).end("ok")
    })
  })
  return listen(server, port, applied)
}

if (import.meta.main) {
  const secret = process.env.SOKONI_WEBHOOK_SECRET ?? "whsec_example"
  const receiver = await startNaiveReceiver(secret, Number(process.env.PORT ?? 4021))
  console.log(`naive receiver on ${receiver.url} (secret from SOKONI_WEBHOOK_SECRET)`)
}
