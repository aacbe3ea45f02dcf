/**
 * Helpers for the stream tests: open `GET /stream` on the in-process engine and read its text as it comes (no
 * timers: each wait is for the next chunk the engine writes), and split the text into SSE messages.
 */
import { expect } from "vitest"
import { contractProblems, type startEngine } from "./harness.ts"

export interface SseMessage {
  readonly id: string | undefined
  readonly event: string | undefined
  readonly data: string | undefined
  readonly retry: string | undefined
  readonly comment: string | undefined
}

/** Splits complete SSE blocks (each ended by a blank line); a trailing partial block is left out. */
export const parseSse = (text: string): Array<SseMessage> => {
  const blocks = text.split("\n\n")
  blocks.pop()
  return blocks.map((block) => {
    const fields: Record<string, string> = {}
    for (const line of block.split("\n")) {
      if (line.startsWith(":")) fields.comment = line.slice(1).trim()
      else {
        const colon = line.indexOf(":")
        fields[line.slice(0, colon)] = line.slice(colon + 1).replace(/^ /, "")
      }
    }
    return { id: fields.id, event: fields.event, data: fields.data, retry: fields.retry, comment: fields.comment }
  })
}

export const eventMessages = (text: string) => parseSse(text).filter((m) => m.id !== undefined)

export interface OpenedStream {
  readonly status: number
  readonly headers: Headers
  /** The error body when the stream was refused. */
  readonly body: any
  /** Everything received so far. */
  text: () => string
  /** Reads until `done(text)` holds; fails if the stream ends first. */
  until: (done: (text: string) => boolean) => Promise<string>
  /** Cancels the reader: the engine sees the client go away. */
  close: () => Promise<void>
}

/** Opens `path` (a /stream URL) with `headers`; the 200 head and any refusal are checked against the contract. */
export const openStream = async (engine: ReturnType<typeof startEngine>, path: string, headers: Record<string, string>): Promise<OpenedStream> => {
  const response = await engine.fetch(new Request(`http://sokoni.test${path}`, { headers }))
  if (response.status !== 200) {
    const body = await response.json()
    const problems = contractProblems("GET", path, headers, { status: response.status, headers: response.headers, body })
    expect(problems).toEqual([])
    const none = async () => {
      throw new Error("refused")
    }
    return { status: response.status, headers: response.headers, body, text: () => "", until: none, close: async () => {} }
  }
  expect(contractProblems("GET", path, headers, { status: 200, headers: response.headers, body: "" })).toEqual([])
  const reader = (response.body as ReadableStream<Uint8Array>).getReader()
  const decoder = new TextDecoder()
  let text = ""
  const until = async (done: (text: string) => boolean) => {
    while (!done(text)) {
      const chunk = await reader.read()
      if (chunk.done) throw new Error(`the stream ended; received:\n${text}`)
      text += decoder.decode(chunk.value, { stream: true })
    }
    return text
  }
  return { status: 200, headers: response.headers, body: undefined, text: () => text, until, close: () => reader.cancel() }
}
