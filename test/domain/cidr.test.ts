/**
 * The ipAllowlist's address arithmetic (domain/cidr.ts): ranges on both families, IPv4-mapped IPv6 read as IPv4, and a
 * property checked against a reference written independently (string prefixes of the binary address).
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { addressAllowed, parseAddress } from "../../engine/domain/cidr.ts"

const bitsOfV4 = (octets: ReadonlyArray<number>) => octets.map((o) => o.toString(2).padStart(8, "0")).join("")

describe("addressAllowed", () => {
  it("an empty list admits anyone, an unknown or malformed address nobody else", () => {
    expect(addressAllowed(undefined, [])).toBe(true)
    expect(addressAllowed("whatever", [])).toBe(true)
    expect(addressAllowed(undefined, ["0.0.0.0/0"])).toBe(false)
    expect(addressAllowed("10.0.0.256", ["0.0.0.0/0"])).toBe(false)
  })

  it.each([
    ["10.1.2.3", ["10.0.0.0/8"], true],
    ["11.1.2.3", ["10.0.0.0/8"], false],
    ["192.168.1.7", ["192.168.1.7"], true],
    ["192.168.1.8", ["192.168.1.7"], false],
    ["192.168.1.8", ["192.168.1.7/31"], false],
    ["192.168.1.6", ["192.168.1.7/31"], true],
    ["1.2.3.4", ["0.0.0.0/0"], true],
    ["::ffff:10.9.9.9", ["10.0.0.0/8"], true],
    ["10.9.9.9", ["::ffff:10.0.0.0/104"], true],
    ["11.9.9.9", ["::ffff:10.0.0.0/104"], false],
    ["::1", ["::1"], true],
    ["::1", ["127.0.0.1"], false],
    ["127.0.0.1", ["::1"], false],
    ["2001:db8::1", ["2001:db8::/32"], true],
    ["2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", ["2001:db8::/32"], true],
    ["2001:db9::", ["2001:db8::/32"], false],
    ["fe80::1", ["2001:db8::/32", "fe80::/10"], true],
    ["2001:db8::1", ["10.0.0.0/8"], false]
  ] as const)("%s in %j: %s", (address, list, allowed) => {
    expect(addressAllowed(address, list)).toBe(allowed)
  })

  it("IPv4 membership equals a prefix comparison of the binary addresses", () => {
    const octets = fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 4, maxLength: 4 })
    fc.assert(
      fc.property(octets, octets, fc.integer({ min: 0, max: 32 }), (address, network, prefix) => {
        const expected = bitsOfV4(address).slice(0, prefix) === bitsOfV4(network).slice(0, prefix)
        expect(addressAllowed(address.join("."), [`${network.join(".")}/${prefix}`])).toBe(expected)
      }),
      { numRuns: 500 }
    )
  })

  it("parses the compressed IPv6 forms to the same value as the full form", () => {
    expect(parseAddress("2001:db8::1")).toEqual(parseAddress("2001:0db8:0000:0000:0000:0000:0000:0001"))
    expect(parseAddress("::")).toEqual({ family: 6, value: 0n })
    expect(parseAddress("1::")).toEqual({ family: 6, value: 1n << 112n })
    expect(parseAddress("::ffff:1.2.3.4")).toEqual({ family: 4, value: 0x01020304n })
    for (const bad of ["1:2:3", "1::2::3", "12345::", "1:2:3:4:5:6:7:8:9", "::ffff:1.2.3", "g::1", "1.2.3.4.5"]) {
      expect(parseAddress(bad), bad).toBeUndefined()
    }
  })
})
