/**
 * The SSE framing of `GET /stream` (domain/sse.ts): one message per event with its position as id and the envelope
 * on one data line whatever the payload holds; resume positions are decimal integers a JavaScript number holds
 * exactly; the caps per tier are the spec's.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { frame, KEEP_ALIVE, parsePosition, retryField, STREAM_CAPS } from "../../engine/domain/sse.ts"

describe("SSE framing", () => {
  it("writes id, event and one data line, ended by a blank line, for any payload (line breaks included)", () => {
    fc.assert(
      fc.property(fc.nat(), fc.string(), fc.jsonValue(), (position, text, payload) => {
        const envelope = { eventId: "evt_1", event: "test.event", data: { text, payload } }
        const message = frame(position, "test.event", envelope)
        const lines = message.split("\n")
        expect(lines).toHaveLength(5)
        expect(lines[0]).toBe(`id: ${position}`)
        expect(lines[1]).toBe("event: test.event")
        expect(JSON.parse((lines[2] ?? "").slice("data: ".length))).toEqual(JSON.parse(JSON.stringify(envelope)))
        expect(lines.slice(3)).toEqual(["", ""])
        expect(message.includes("\r")).toBe(false)
      })
    )
    expect(frame(7, "x", { a: "b\nc" })).toBe('id: 7\nevent: x\ndata: {"a":"b\\nc"}\n\n')
  })

  it("writes the retry field and the keep-alive comment as the contract shows them", () => {
    expect(retryField(3000)).toBe("retry: 3000\n\n")
    expect(KEEP_ALIVE).toBe(": keep-alive\n\n")
  })

  it("reads a resume position: digits only, at most 15 of them", () => {
    expect(parsePosition("0")).toBe(0)
    expect(parsePosition("42")).toBe(42)
    expect(parsePosition("007")).toBe(7)
    expect(parsePosition("999999999999999")).toBe(999_999_999_999_999)
    for (const bad of ["", "-1", "1.5", "1e3", " 1", "abc", "1234567890123456", "٣"]) expect(parsePosition(bad)).toBeUndefined()
  })

  it("caps concurrent streams at 2, 5 and 20 for starter, growth and enterprise (spec Limits)", () => {
    expect(STREAM_CAPS).toEqual({ starter: 2, growth: 5, enterprise: 20 })
  })
})
