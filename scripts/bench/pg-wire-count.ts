/**
 * Round trips of one PostgreSQL client connection, read off the bytes both ways (the counting proxies of
 * scripts/bench/pg-roundtrips.ts and test/support/pg-counting-proxy.ts). A round trip is a wait for the server: a
 * Sync (the end of an extended-protocol cycle) or a simple Query sent while nothing sent before awaits its answer
 * (ReadyForQuery). Statements sent together, before the first answer (a pipeline, E-521), are one round trip, as the
 * client waits once for all of them; sent one after another, each answered first, they are one each.
 */

/** Splits a stream of typed messages (type byte, length) as chunks arrive; the startup packets have no type byte. */
const messages = (startup: boolean) => {
  let buffer: Buffer = Buffer.alloc(0)
  let started = !startup
  return (chunk: Buffer, each: (type: number, body: Buffer) => void, onStartup?: (code: number) => void) => {
    buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk])
    for (;;) {
      if (!started) {
        if (buffer.length < 8 || buffer.length < buffer.readInt32BE(0)) break
        const code = buffer.readInt32BE(4)
        buffer = buffer.subarray(buffer.readInt32BE(0))
        onStartup?.(code)
        if (code !== SSL_REQUEST) started = true // an SSLRequest is followed by the real startup packet
        continue
      }
      if (buffer.length < 5 || buffer.length < buffer.readInt32BE(1) + 1) break
      each(buffer[0] as number, buffer.subarray(5, buffer.readInt32BE(1) + 1))
      buffer = buffer.subarray(buffer.readInt32BE(1) + 1)
    }
  }
}

const SSL_REQUEST = 80877103
const SYNC = 0x53
const QUERY = 0x51
const READY = 0x5a

export interface WireCount {
  /** Bytes the client sent; `each` sees every message after the startup packet. */
  readonly client: (chunk: Buffer, each?: (type: string, body: Buffer) => void) => void
  /** Bytes the server sent. */
  readonly server: (chunk: Buffer) => void
}

/** Counts into `trip` each round trip of one connection. */
export const wireCount = (trip: () => void): WireCount => {
  const fromClient = messages(true)
  const fromServer = messages(false)
  let awaiting = 0
  // The server answers an SSLRequest with one byte ('N': go on in plain text), outside any message.
  let sslAnswers = 0
  return {
    client: (chunk, each) =>
      fromClient(
        chunk,
        (type, body) => {
          if (type === SYNC || type === QUERY) {
            if (awaiting === 0) trip()
            awaiting++
          }
          each?.(String.fromCharCode(type), body)
        },
        (code) => void (code === SSL_REQUEST && sslAnswers++)
      ),
    server: (chunk) => {
      let rest = chunk
      while (sslAnswers > 0 && rest.length > 0) {
        sslAnswers--
        rest = rest.subarray(1)
      }
      // The ReadyForQuery that ends the startup answers nothing the client counted.
      fromServer(rest, (type) => void (type === READY && awaiting > 0 && awaiting--))
    }
  }
}
