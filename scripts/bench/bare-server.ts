/**
 * The baseline: a bare node:http server that replays answers captured from the engine, byte for byte (status, body and
 * every header the engine set; node:http adds Date, Connection and Keep-Alive as it does for the engine). A request is
 * matched on method and path prefix; its body is read to the end before answering, as any real handler must.
 * Usage: node bare-server.ts <port> <routes.json>, routes being Route[].
 */
import { readFileSync } from "node:fs"
import { createServer } from "node:http"

export interface Route {
  readonly method: string
  readonly pathPrefix: string
  readonly status: number
  readonly headers: Record<string, string>
  readonly body: string
}

const [port, file] = process.argv.slice(2)
const routes = (JSON.parse(readFileSync(file!, "utf8")) as Route[]).map((r) => ({ ...r, bytes: Buffer.from(r.body) }))

createServer((req, res) => {
  const route = routes.find((r) => r.method === req.method && req.url?.startsWith(r.pathPrefix))
  req.resume()
  req.on("end", () => {
    if (route === undefined) {
      res.writeHead(404).end()
      return
    }
    res.writeHead(route.status, route.headers)
    res.end(route.bytes)
  })
}).listen(Number(port), "127.0.0.1")
