/** The text conform writes about its exchanges: a reproducer that never prints a key, and one SSE message read. */
import { describe, expect, it } from "vitest"
import type { Exchange } from "../../engine/conform/target.ts"
import { curlCommand, parseSseMessage, shellQuote, timelineOf } from "../../engine/conform/exchange-text.ts"

describe("a reproducer", () => {
  it("names the key's environment variable instead of printing it, and quotes the body for a shell", () => {
    const curl = curlCommand("http://h/api/v1/partner/trade", {
      method: "POST",
      headers: { "x-api-key": "sk_live_secret", "Idempotency-Key": "k'1" },
      body: `{"note":"it's"}`
    })
    expect(curl).not.toContain("sk_live_secret")
    expect(curl).toContain(`-H "x-api-key: $SOKONI_KEY"`)
    expect(curl).toContain(`-H 'Idempotency-Key: k'\\''1'`)
    expect(curl).toContain(`--data-binary '{"note":"it'\\''s"}'`)
  })

  it("keeps a bearer token's scheme apart from other authorization schemes", () => {
    expect(curlCommand("http://h/x", { method: "GET", headers: { authorization: "Bearer abc" }, body: undefined })).toContain(
      `"authorization: Bearer $SOKONI_KEY"`
    )
    expect(curlCommand("http://h/x", { method: "GET", headers: { authorization: "Basic abc" }, body: undefined })).toContain(`"authorization: $SOKONI_AUTH"`)
  })

  it("quotes a word so a POSIX shell reads it back unchanged", () => {
    expect(shellQuote("a'b")).toBe(`'a'\\''b'`)
    expect(shellQuote("it's Bob's")).toBe(`'it'\\''s Bob'\\''s'`)
  })

  it("is the whole command: curl, the method, the quoted URL, the headers, then the body", () => {
    const curl = curlCommand("http://h/api/v1/partner/trade?x=1", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}"
    })
    expect(curl).toBe(`curl -sS -i -X POST 'http://h/api/v1/partner/trade?x=1' -H 'content-type: application/json' --data-binary '{}'`)
  })

  it("hides a key whatever the case of its header's name", () => {
    const curl = curlCommand("http://h/x", {
      method: "GET",
      headers: { "X-Api-Key": "sk_live_one", Authorization: "Bearer sk_live_two" },
      body: undefined
    })
    expect(curl).toBe(`curl -sS -i -X GET 'http://h/x' -H "X-Api-Key: $SOKONI_KEY" -H "Authorization: Bearer $SOKONI_KEY"`)
    expect(curlCommand("http://h/x", { method: "GET", headers: { AUTHORIZATION: "Basic abc" }, body: undefined })).toContain(`"AUTHORIZATION: $SOKONI_AUTH"`)
  })
})

const exchange = (over: Partial<Exchange>): Exchange => ({
  method: "GET",
  path: "/api/v1/partner/stocks",
  headers: {},
  body: undefined,
  status: 200,
  responseHeaders: new Headers(),
  json: null,
  text: "",
  at: Date.UTC(2026, 0, 5, 9, 30),
  ...over
})

describe("a report's timeline of exchanges", () => {
  it("gives each exchange a request row and an answer row at its instant", () => {
    expect(timelineOf([exchange({ text: `{"items":[]}` }), exchange({ method: "POST", path: "/p", body: "{}", status: 201, text: "ok" })])).toEqual([
      { at: "2026-01-05T09:30:00.000Z", kind: "request", text: "GET /api/v1/partner/stocks" },
      { at: "2026-01-05T09:30:00.000Z", kind: "response", text: `200 {"items":[]}` },
      { at: "2026-01-05T09:30:00.000Z", kind: "request", text: "POST /p {}" },
      { at: "2026-01-05T09:30:00.000Z", kind: "response", text: "201 ok" }
    ])
  })

  it("cuts a request's body after 160 characters and an answer after 200", () => {
    const [request, response] = timelineOf([exchange({ method: "POST", path: "/p", body: "b".repeat(300), text: "t".repeat(300) })])
    expect(request?.text).toBe(`POST /p ${"b".repeat(160)}`)
    expect(response?.text).toBe(`200 ${"t".repeat(200)}`)
  })
})

describe("one event-stream message", () => {
  it("reads its event, id and JSON data, and skips comments", () => {
    expect(parseSseMessage(`: keep-alive\nid: 42\nevent: order.filled\ndata: {"orderId":"o1"}`)).toEqual({
      id: "42",
      event: "order.filled",
      data: { orderId: "o1" }
    })
  })

  it("keeps data that is not JSON as text", () => {
    expect(parseSseMessage("event: ping\ndata: hello")).toEqual({ event: "ping", data: "hello" })
  })

  it("drops only the one optional space after a field's colon", () => {
    expect(parseSseMessage("event:order.filled\nid:7 8\ndata:a b")).toEqual({ event: "order.filled", id: "7 8", data: "a b" })
    expect(parseSseMessage("event: ping\ndata:  two")).toEqual({ event: "ping", data: " two" })
  })

  it("keeps only the fields it knows: event, id and data", () => {
    expect(parseSseMessage("retry: 3000\nevent: ping\nfoo: bar")).toEqual({ event: "ping" })
  })

  it("sets no field from a line without a colon", () => {
    // no colon: not the fields id and event, though they begin with those names
    expect(parseSseMessage("event: ping\nids\nevents")).toEqual({ event: "ping" })
  })

  it("is nothing without an event name", () => {
    expect(parseSseMessage(": comment only\ndata: 1")).toBeUndefined()
  })
})
