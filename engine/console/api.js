// The console's calls to the engine: every one carries the admin token the page keeps in sessionStorage (E-380).
// The live feed is read with fetch, not EventSource, because EventSource cannot send the Authorization header.

const TOKEN_KEY = "sokoni.console.adminToken"

export const token = {
  get: () => sessionStorage.getItem(TOKEN_KEY) ?? "",
  set: (value) => sessionStorage.setItem(TOKEN_KEY, value),
  clear: () => sessionStorage.removeItem(TOKEN_KEY)
}

/** A refusal of the engine: its HTTP status and the error envelope's code and message. */
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message)
    this.status = status
    this.code = code
  }
}

// x-sokoni-console: the engine neither traces the console's reads nor echoes them on its feed (E-382).
const headers = (extra = {}) => ({ authorization: `Bearer ${token.get()}`, "x-sokoni-console": "1", ...extra })

/** Calls the engine; resolves to the JSON answer, rejects with an ApiError carrying the envelope. */
export const call = async (method, path, body) => {
  const init = { method, headers: headers(body === undefined ? {} : { "content-type": "application/json" }) }
  if (body !== undefined) init.body = JSON.stringify(body)
  const response = await fetch(path, init)
  const text = await response.text()
  const json = text === "" ? undefined : JSON.parse(text)
  if (!response.ok) throw new ApiError(response.status, json?.error?.code ?? "HTTP_ERROR", json?.error?.message ?? `${method} ${path}: ${response.status}`)
  return json
}

/** Like call, but a 404 answers `undefined`: a panel whose endpoint this engine does not have says so. */
export const callIfPresent = async (method, path) => {
  try {
    return await call(method, path)
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return undefined
    throw error
  }
}

/**
 * Reads the console feed (`GET /_sim/console/stream`) and calls `onMessage(name, data)` per message until `signal`
 * aborts or the stream ends; resolves then, rejects with an ApiError when the engine refuses it.
 */
export const readFeed = async (onMessage, signal) => {
  const response = await fetch("/_sim/console/stream", { headers: headers({ accept: "text/event-stream" }), signal })
  if (!response.ok) {
    const json = await response.json().catch(() => undefined)
    throw new ApiError(response.status, json?.error?.code ?? "HTTP_ERROR", json?.error?.message ?? `feed: ${response.status}`)
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader()
  let buffer = ""
  for (;;) {
    const { value, done } = await reader.read()
    if (done) return
    buffer += value
    let end = buffer.indexOf("\n\n")
    while (end >= 0) {
      dispatch(buffer.slice(0, end), onMessage)
      buffer = buffer.slice(end + 2)
      end = buffer.indexOf("\n\n")
    }
  }
}

const dispatch = (block, onMessage) => {
  let name = "message"
  let data = ""
  for (const line of block.split("\n")) {
    if (line.startsWith("event: ")) name = line.slice(7)
    else if (line.startsWith("data: ")) data += line.slice(6)
  }
  if (data !== "") onMessage(name, JSON.parse(data))
}
