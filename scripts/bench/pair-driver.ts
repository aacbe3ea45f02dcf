/**
 * quote->trade pairs over kept-alive HTTP against an engine server the bench started (alloc-http.ts, callgrind-pair.ts):
 * creates an enterprise partner with a sandbox wallet through the control API, then runs loops of pairs on its first
 * listed symbol. A kept-alive socket the server closed as a request went out on it (ECONNRESET, nothing processed) is
 * retried once on a fresh socket: under valgrind an idle socket outlives serve's 5 s keep-alive.
 */
import { Agent, request } from "node:http"
import { ADMIN, SANDBOX } from "./in-process.ts"

interface Answer {
  readonly status: number
  readonly json: Record<string, unknown>
}

export const pairDriver = async (base: string, connections: number, keyPrefix: string) => {
  const agent = new Agent({ keepAlive: true, maxSockets: connections })
  const once = (method: string, path: string, headers: Record<string, string>, body?: unknown) =>
    new Promise<Answer>((resolve, reject) => {
      const text = body === undefined ? undefined : JSON.stringify(body)
      const req = request(
        `${base}${path}`,
        { method, agent, headers: text === undefined ? headers : { ...headers, "content-type": "application/json" } },
        (res) => {
          const chunks: Array<Buffer> = []
          res.on("data", (c: Buffer) => chunks.push(c))
          res.on("end", () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString()) as Record<string, unknown> }))
        }
      )
      req.on("error", reject)
      req.end(text)
    })
  const call = (method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<Answer> =>
    once(method, path, headers, body).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== "ECONNRESET") throw error
      return once(method, path, headers, body)
    })
  const admin = { authorization: `Bearer ${ADMIN}` }
  const partner = (await call("POST", "/_sim/partners", admin, { businessName: "Bench", email: "bench@sokoni.test", tier: "enterprise" })).json
  await call("POST", `/_sim/partners/${partner.partnerId}/wallet/credit`, admin, { environment: "sandbox", amount: 1_000_000 })
  const key = { "x-api-key": partner.sandboxKey as string }
  const symbol = ((await call("GET", `${SANDBOX}/stocks`, key)).json.stocks as Array<{ symbol: string }>)[0]!.symbol
  let sequence = 0
  let sent = 0
  let accepted = 0
  const loop = async (count: number) => {
    for (let i = 0; i < count; i++) {
      const quote = await call("GET", `${SANDBOX}/quote/${symbol}?side=BUY&quantity=1`, key)
      const body = { symbol, type: "BUY", quantity: 1, quoteId: quote.json.quoteId }
      const trade = await call("POST", `${SANDBOX}/trade`, { ...key, "idempotency-key": `${keyPrefix}-${++sequence}` }, body)
      sent++
      if (trade.status === 202) accepted++
    }
  }
  /** `count` pairs spread over `loops` concurrent loops (each rounded up). */
  const pairs = (count: number, loops: number) => Promise.all(Array.from({ length: loops }, () => loop(Math.ceil(count / loops))))
  return {
    pairs,
    /** Trades sent, and accepted (202), since the last `resetCounts`. */
    sent: () => sent,
    accepted: () => accepted,
    resetCounts: () => {
      sent = 0
      accepted = 0
    },
    close: () => agent.destroy()
  }
}
