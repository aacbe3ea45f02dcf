/**
 * A webhook receiver done right, as a partner would write it (plain node:http, no framework). `sokoni webhooks
 * check` gives it full marks (test/conform/webhook-receiver-check.test.ts). What makes it right:
 * - it verifies `x-service-signature` over the raw request bytes (HMAC-SHA256, hex) with a constant-time compare,
 *   before parsing anything, and answers 401 to a mismatch;
 * - it deduplicates by `eventId` (at-least-once delivery) and answers 200 to a duplicate without applying it again;
 * - it derives an order's state from the payload and never moves an order back (order.pending after order.filled
 *   is acknowledged and ignored);
 * - it answers at once; the work is small here, and would be queued in a real service.
 *
 * Run it: `SOKONI_WEBHOOK_SECRET=whsec_x PORT=4020 node contracts/examples/receiver-correct.ts`
 */
import { createHmac, timingSafeEqual } from "node:crypto"
import { createServer, type IncomingMessage } from "node:http"
import type { AddressInfo } from "node:net"

export interface Receiver {
  readonly url: string
  /** Events applied, in the order applied (what the receiver's "effect" is; only tests look at it). */
  readonly applied: ReadonlyArray<{ readonly eventId: string; readonly event: string }>
  readonly close: () => Promise<void>
}

const readRaw = (request: IncomingMessage): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => resolve(Buffer.concat(chunks)))
    request.on("error", reject)
  })

/** True when `header` is the hex HMAC-SHA256 of exactly `raw` under `secret`, compared in constant time. */
export const signatureMatches = (secret: string, raw: Buffer, header: string | undefined): boolean => {
  if (header === undefined || !/^[0-9a-f]{64}$/i.test(header)) return false
  const expected = createHmac("sha256", secret).update(raw).digest()
  return timingSafeEqual(expected, Buffer.from(header, "hex"))
}

const RANK: Readonly<Record<string, number>> = { PENDING: 1, FILLED: 2, REJECTED: 2, CANCELLED: 2 }

/**
 * `header`: where the signature is read; `x-mystocks-signature` makes it a receiver written against the public
 * service (facts row 11.2), which `webhooks check --signature-header x-mystocks-signature` grades.
 */
export const startCorrectReceiver = (secret: string, port = 0, header = "x-service-signature"): Promise<Receiver> => {
  const seen = new Set<string>()
  const orders = new Map<string, string>()
  const applied: Array<{ eventId: string; event: string }> = []
  const server = createServer(async (request, response) => {
    const raw = await readRaw(request)
    const signature = request.headers[header]
    if (!signatureMatches(secret, raw, Array.isArray(signature) ? signature[0] : signature)) {
      response.writeHead(401, { "content-type": "application/json" }).end('{"error":"bad signature"}')
      return
    }
    let envelope: { eventId?: unknown; event?: unknown; data?: { orderId?: unknown; status?: unknown } }
    try {
      envelope = JSON.parse(raw.toString("utf8"))
    } catch {
      response.writeHead(400).end()
      return
    }
    const eventId = String(envelope.eventId)
    // Acknowledge first: a duplicate or an out-of-date event is still a delivery received.
    response.writeHead(200, { "content-type": "application/json" }).end('{"received":true}')
    if (seen.has(eventId)) return
    seen.add(eventId)
    const orderId = envelope.data?.orderId
    const status = envelope.data?.status
    if (typeof orderId === "string" && typeof status === "string") {
      const current = orders.get(orderId)
      if (current !== undefined && (RANK[current] ?? 0) >= (RANK[status] ?? 0)) return // older news: keep the later state
      orders.set(orderId, status)
    }
    applied.push({ eventId, event: String(envelope.event) })
  })
  return listen(server, port, applied)
}

/** Starts `server` on 127.0.0.1:`port` (0: any free port) and describes it. */
export const listen = (server: ReturnType<typeof createServer>, port: number, applied: Receiver["applied"]): Promise<Receiver> =>
  new Promise((resolve, reject) => {
    server.once("error", reject)
    server.listen(port, "127.0.0.1", () => {
      const address = server.address() as AddressInfo
      resolve({
        url: `http://127.0.0.1:${address.port}/webhooks/sokoni`,
        applied,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections()
            server.close(() => done())
          })
      })
    })
  })

if (import.meta.main) {
  const secret = process.env.SOKONI_WEBHOOK_SECRET ?? "whsec_example"
  const receiver = await startCorrectReceiver(secret, Number(process.env.PORT ?? 4020))
  console.log(`correct receiver on ${receiver.url} (secret from SOKONI_WEBHOOK_SECRET)`)
}
