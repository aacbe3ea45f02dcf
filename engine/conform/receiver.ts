/**
 * A webhook receiver `sokoni conform` runs on 127.0.0.1 (a free port) for the webhook checks: it keeps every request's
 * exact bytes and signature header and answers 200. Owns nothing else; the verdicts are stateful-checks.ts's.
 * Loopback http is a URL the engine accepts for webhooks (app/webhooks.ts); a remote target cannot reach it.
 */
import { createServer } from "node:http"

export interface Received {
  readonly raw: Buffer
  readonly body: string
  readonly signature: string | undefined
}

/** `onReceive` is told of every delivery's exact bytes as it arrives (the run's history records them). */
export const startReceiver = async (onReceive?: (raw: string) => void) => {
  const got: Array<Received> = []
  const server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const raw = Buffer.concat(chunks)
      const header = req.headers["x-service-signature"]
      got.push({ raw, body: raw.toString("utf8"), signature: Array.isArray(header) ? header[0] : header })
      onReceive?.(raw.toString("utf8"))
      res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}')
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
