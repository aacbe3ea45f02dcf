/**
 * A TCP proxy in front of a PostgreSQL server that counts the round trips its clients ask for: a Sync (the end of an
 * extended-protocol cycle) or a simple Query is one. Test infrastructure (as scripts/bench/pg-roundtrips.ts counts):
 * listens on 127.0.0.1, an ephemeral port.
 */
import { createConnection, createServer, type Server, type Socket } from "node:net"

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
      sockets.add(socket)
      socket.on("close", () => sockets.delete(socket))
    }
    let started = false
    let buffer = Buffer.alloc(0)
    client.on("data", (chunk) => {
      server.write(chunk)
      buffer = Buffer.concat([buffer, chunk])
      for (;;) {
        // The startup packet (and an SSLRequest before it) has no type byte.
        if (!started) {
          if (buffer.length < 8 || buffer.length < buffer.readInt32BE(0)) break
          const code = buffer.readInt32BE(4)
          buffer = buffer.subarray(buffer.readInt32BE(0))
          if (code !== 80877103) started = true
          continue
        }
        if (buffer.length < 5 || buffer.length < buffer.readInt32BE(1) + 1) break
        if (buffer[0] === 0x53 || buffer[0] === 0x51) trips++ // 'S' Sync, 'Q' Query
        buffer = buffer.subarray(buffer.readInt32BE(1) + 1)
      }
    })
    server.on("data", (chunk) => client.write(chunk))
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
