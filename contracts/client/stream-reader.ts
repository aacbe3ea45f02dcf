/**
 * The reference partner's event-stream reader: opens `GET /stream` (resuming after the last id it saw, with
 * `Last-Event-ID`), splits the Server-Sent Events text into messages, and keeps a cursor so that a message already
 * seen (an id not above the last one) is never handled twice. Each message's `data:` is the same envelope a webhook
 * delivery carries, so the partner hands it to the same handler (webhook-handler.ts).
 * Owns nothing of the engine: it talks HTTP with `fetch` and knows only the contract.
 */
import type { Envelope } from "./webhook-handler.ts"

export interface StreamMessage {
  /** The event-log position (`id:`), the resume point. */
  readonly id: number
  readonly event: string
  readonly envelope: Envelope
}

/**
 * Splits complete SSE blocks (each ended by a blank line) into messages; comments (`: keep-alive`) and the `retry:`
 * block carry no id and are skipped; a trailing partial block is returned as `rest` to be completed by the next chunk.
 */
export const splitMessages = (text: string): { readonly messages: ReadonlyArray<StreamMessage>; readonly rest: string } => {
  const blocks = text.split("\n\n")
  const rest = blocks.pop() ?? ""
  const messages: Array<StreamMessage> = []
  for (const block of blocks) {
    const fields = new Map<string, string>()
    for (const line of block.split("\n")) {
      if (line.startsWith(":")) continue
      const colon = line.indexOf(":")
      if (colon > 0) fields.set(line.slice(0, colon), line.slice(colon + 1).replace(/^ /, ""))
    }
    const id = fields.get("id")
    const data = fields.get("data")
    if (id === undefined || data === undefined) continue
    messages.push({ id: Number(id), event: fields.get("event") ?? "message", envelope: JSON.parse(data) as Envelope })
  }
  return { messages, rest }
}

/** The partner's resume cursor: the last id handled; a message at or below it is a repeat and is dropped. */
export const makeCursor = (lastEventId?: number) => {
  let last = lastEventId
  return {
    get last() {
      return last
    },
    /** The messages not seen before, in order; moves the cursor past them. */
    accept: (messages: ReadonlyArray<StreamMessage>): ReadonlyArray<StreamMessage> =>
      messages.filter((m) => {
        if (last !== undefined && m.id <= last) return false
        last = m.id
        return true
      })
  }
}

export interface StreamOptions {
  /** e.g. http://127.0.0.1:4010/api/sandbox/v1/partner */
  readonly baseUrl: string
  readonly apiKey: string
  readonly lastEventId?: number
  readonly signal?: AbortSignal
}

/** Opens the stream; the caller reads `response.body` (or gives up with `signal`). */
export const openStream = (options: StreamOptions): Promise<Response> =>
  fetch(`${options.baseUrl}/stream`, {
    headers: {
      "x-api-key": options.apiKey,
      accept: "text/event-stream",
      ...(options.lastEventId === undefined ? {} : { "last-event-id": String(options.lastEventId) })
    },
    ...(options.signal === undefined ? {} : { signal: options.signal })
  })

/**
 * Reads messages from an opened stream until `enough` says so or the stream ends; returns the new messages (repeats
 * dropped by the cursor) in order.
 */
export const readMessages = async (
  response: Response,
  cursor: ReturnType<typeof makeCursor>,
  enough: (received: ReadonlyArray<StreamMessage>) => boolean
): Promise<ReadonlyArray<StreamMessage>> => {
  const received: Array<StreamMessage> = []
  if (response.body === null) return received
  const reader = response.body.getReader()
  const decoder = new TextDecoder()
  let pending = ""
  try {
    while (!enough(received)) {
      const { done, value } = await reader.read()
      if (done) break
      const { messages, rest } = splitMessages(pending + decoder.decode(value, { stream: true }))
      pending = rest
      received.push(...cursor.accept(messages))
    }
  } finally {
    await reader.cancel().catch(() => undefined)
  }
  return received
}
