/**
 * A TCP proxy in front of a PostgreSQL server that counts the round trips its clients ask for: a Sync (the end of an
 * extended-protocol cycle) or a simple Query sent while nothing before it awaits an answer is one; statements sent
 * together are one (scripts/bench/pg-wire-count.ts, as scripts/bench/pg-roundtrips.ts counts). Test infrastructure:
 * listens on 127.0.0.1, an ephemeral port; relays at once both ways (no Nagle delay of its own).
 */
import { createConnection, createServer, type Server, type Socket } from "node:net"
import { wireCount } from "../../scripts/bench/pg-wire-count.ts"

export interface CountingProxy {
  /** The port to connect to instead of the server's. */
  readonly port: number
  /** Round trips asked so far, by every client. */
  readonly trips: () => number
  readonly close: () => Promise<void>
}

export const countingProxy = async (serverUrl: string): Promise<CountingProxy> => {
  const upstream = new URL(serverUrl)
  let trips = 0
  const sockets = new Set<Socket>()
  const relay = (client: Socket) => {
    const server = createConnection({ host: upstream.hostname, port: Number(upstream.port || 5432) })
    for (const socket of [client, server]) {
      socket.setNoDelay(true)
      sockets.add(socket)
      socket.on("close", () => sockets.delete(socket))
    }
    const count = wireCount(() => void trips++)
    client.on("data", (chunk) => {
      count.client(chunk)
      server.write(chunk)
    })
    server.on("data", (chunk) => {
      count.server(chunk)
      client.write(chunk)
    })
    client.on("close", () => server.destroy())
    server.on("close", () => client.destroy())
    client.on("error", () => server.destroy())
    server.on("error", () => client.destroy())
  }
  const proxy: Server = createServer(relay)
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve))
  return {
    port: (proxy.address() as { port: number }).port,
    trips: () => trips,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        proxy.close(() => resolve())
      })
  }
}
