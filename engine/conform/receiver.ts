/**
 * A webhook receiver `sokoni conform` runs on 127.0.0.1 (a free port) for the webhook checks: it keeps every request's
 * exact bytes, signature header and arrival instant, and answers 200, or 500 to the first `failFirst` requests (so the
 * target retries). Owns nothing else; the verdicts are the stateful checks'.
 * Loopback http is a URL the engine accepts for webhooks (domain/webhooks/decide-webhook.ts); a remote target cannot reach it.
 */
import { createServer } from "node:http"

export interface Received {
  readonly raw: Buffer
  readonly body: string
  readonly signature: string | undefined
  /** When it arrived, on the clock given (conform's); 0 without one. */
  readonly at: number
  /** The status the receiver answered. */
  readonly answered: number
}

export interface ReceiverOptions {
  /** Answer 500 to this many requests first (default 0): the target must retry them. */
  readonly failFirst?: number | undefined
  readonly now?: (() => number) | undefined
}

/** `onReceive` is told of every delivery's exact bytes as it arrives (the run's history records them). */
export const startReceiver = async (onReceive?: (raw: string) => void, options: ReceiverOptions = {}) => {
  const got: Array<Received> = []
  const server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const raw = Buffer.concat(chunks)
      const header = req.headers["x-service-signature"]
      const answered = got.length < (options.failFirst ?? 0) ? 500 : 200
      got.push({ raw, body: raw.toString("utf8"), signature: Array.isArray(header) ? header[0] : header, at: options.now?.() ?? 0, answered })
      onReceive?.(raw.toString("utf8"))
      res.writeHead(answered, { "content-type": "application/json" }).end(answered === 200 ? '{"ok":true}' : '{"error":"conform asks for a retry"}')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address = server.address()
  const port = typeof address === "object" && address !== null ? address.port : 0
  return {
    url: `http://127.0.0.1:${port}/webhooks/sokoni`,
    received: (): ReadonlyArray<Received> => got.slice(),
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}
