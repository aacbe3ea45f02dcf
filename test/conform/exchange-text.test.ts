/** The text conform writes about its exchanges: a reproducer that never prints a key, and one SSE message read. */
import { describe, expect, it } from "vitest"
import { curlCommand, parseSseMessage, shellQuote } from "../../engine/conform/exchange-text.ts"

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

  it("is nothing without an event name", () => {
    expect(parseSseMessage(": comment only\ndata: 1")).toBeUndefined()
  })
})
