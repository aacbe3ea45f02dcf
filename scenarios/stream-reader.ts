/**
 * The event stream as a scenario reads it: SSE blocks parsed into messages, read in the background and handed out
 * complete and in order. Owns the parsing and the read's failure bound; the stream steps are runner.ts's.
 */

/**
 * How long a stream `read` waits for the messages it expects before reporting what it got. A failure bound only: a
 * read returns as soon as its messages are there, so a passing run never waits on it, and a loaded machine (or a live
 * target on a wall clock, where a keep-alive takes 15 s) has room before a correct stream is called short.
 */
export const STREAM_READ_LIMIT_MS = 60_000

/** One SSE block as a scenario sees it: its fields, the data parsed when it is JSON. */
export interface StreamMessage {
  readonly retry?: number
  readonly id?: string
  readonly event?: string
  readonly data?: unknown
  readonly comment?: string
}

export const parseBlock = (block: string): StreamMessage => {
  const message: Record<string, unknown> = {}
  for (const line of block.split("\n")) {
    if (line.startsWith(":")) message.comment = line.slice(1).trim()
    else {
      const colon = line.indexOf(":")
      const field = colon === -1 ? line : line.slice(0, colon)
      const value = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "")
      if (field === "retry") message.retry = Number(value)
      else if (field === "data") {
        try {
          message.data = JSON.parse(value)
        } catch {
          message.data = value
        }
      } else message[field] = value
    }
  }
  return message as StreamMessage
}

/** A stream opened by a scenario: reads in the background, hands out complete messages in order. */
export const streamReader = (body: ReadableStream<Uint8Array>) => {
  const reader = body.getReader()
  const decoder = new TextDecoder()
  const messages: Array<StreamMessage> = []
  let text = ""
  let ended = false
  let wake: (() => void) | undefined
  void (async () => {
    try {
      while (true) {
        const chunk = await reader.read()
        if (chunk.done) break
        text += decoder.decode(chunk.value, { stream: true })
        let end = text.indexOf("\n\n")
        while (end !== -1) {
          messages.push(parseBlock(text.slice(0, end)))
          text = text.slice(end + 2)
          end = text.indexOf("\n\n")
        }
        wake?.()
      }
    } catch {
      // cancelled
    }
    ended = true
    wake?.()
  })()
  /** The next `count` messages, or fewer when the stream ends or the limit passes first. */
  const take = async (count: number): Promise<Array<StreamMessage>> => {
    const deadline = Date.now() + STREAM_READ_LIMIT_MS
    while (messages.length < count && !ended && Date.now() < deadline) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(0, deadline - Date.now()))
        wake = () => {
          clearTimeout(timer)
          resolve()
        }
      })
    }
    return messages.splice(0, count)
  }
  return { take, close: () => reader.cancel() }
}
