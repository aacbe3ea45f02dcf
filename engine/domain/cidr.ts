/**
 * IP addresses and CIDR ranges, for the partner's `ipAllowlist` setting (D-065, D-127): whether an entry is well formed
 * and whether a caller's address falls inside one of the ranges. Pure; IPv4, IPv6 and IPv4-mapped IPv6
 * (`::ffff:10.0.0.1`, as Node reports an IPv4 peer on a dual-stack socket) are compared as the same IPv4 address.
 */

interface Parsed {
  readonly family: 4 | 6
  /** The address as an unsigned integer of 32 (IPv4) or 128 (IPv6) bits. */
  readonly value: bigint
}

const parseV4 = (text: string): bigint | undefined => {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text)
  if (m === null) return undefined
  const octets = m.slice(1).map(Number)
  if (octets.some((o) => o > 255)) return undefined
  return octets.reduce((acc, o) => (acc << 8n) | BigInt(o), 0n)
}

const parseGroups = (text: string): Array<number> | undefined => {
  if (text === "") return []
  const groups = text.split(":")
  if (groups.some((g) => !/^[0-9a-fA-F]{1,4}$/.test(g))) return undefined
  return groups.map((g) => Number.parseInt(g, 16))
}

const parseV6 = (text: string): bigint | undefined => {
  // A trailing dotted IPv4 part stands for the last two groups (`::ffff:10.0.0.1`).
  const lastColon = text.lastIndexOf(":")
  let head = text
  let tail: Array<number> = []
  if (text.slice(lastColon + 1).includes(".")) {
    const v4 = parseV4(text.slice(lastColon + 1))
    if (v4 === undefined) return undefined
    tail = [Number(v4 >> 16n), Number(v4 & 0xffffn)]
    head = text.slice(0, lastColon + 1)
    if (head.endsWith(":") && !head.endsWith("::")) head = head.slice(0, -1)
  }
  const halves = head.split("::")
  if (halves.length > 2) return undefined
  const left = parseGroups(halves[0] ?? "")
  const right = halves.length === 2 ? parseGroups(halves[1] ?? "") : []
  if (left === undefined || right === undefined) return undefined
  const given = left.length + right.length + tail.length
  if (halves.length === 1 ? given !== 8 : given > 7) return undefined
  const groups = [...left, ...Array<number>(8 - given).fill(0), ...right, ...tail]
  return groups.reduce((acc, g) => (acc << 16n) | BigInt(g), 0n)
}

const MAPPED_V4_PREFIX = 0xffffn << 32n

/** Parses an address; an IPv4-mapped IPv6 address comes back as its IPv4 address. */
export const parseAddress = (text: string): Parsed | undefined => {
  const v4 = parseV4(text)
  if (v4 !== undefined) return { family: 4, value: v4 }
  if (!text.includes(":")) return undefined
  const v6 = parseV6(text)
  if (v6 === undefined) return undefined
  if (v6 >> 32n === 0xffffn) return { family: 4, value: v6 - MAPPED_V4_PREFIX }
  return { family: 6, value: v6 }
}

interface Range {
  readonly family: 4 | 6
  readonly network: bigint
  readonly prefix: number
}

const parseRange = (entry: string): Range | undefined => {
  const [address, prefixText, ...rest] = entry.split("/")
  if (address === undefined || rest.length > 0) return undefined
  const parsed = parseAddress(address)
  if (parsed === undefined) return undefined
  const bits = parsed.family === 4 ? 32 : 128
  // A mapped address written with an IPv6 prefix (`::ffff:10.0.0.0/104`) keeps its meaning as an IPv4 prefix.
  const mappedWithV6Prefix = parsed.family === 4 && address.includes(":")
  if (prefixText === undefined) return { family: parsed.family, network: parsed.value, prefix: bits }
  if (!/^\d{1,3}$/.test(prefixText)) return undefined
  const written = Number(prefixText)
  const prefix = mappedWithV6Prefix ? written - 96 : written
  if (prefix < 0 || prefix > bits || written > (address.includes(":") ? 128 : 32)) return undefined
  return { family: parsed.family, network: parsed.value, prefix }
}

/** An IPv4 or IPv6 address with an optional prefix length: what an allowlist entry must be. */
export const isCidr = (entry: string): boolean => parseRange(entry) !== undefined

const inRange = (address: Parsed, range: Range): boolean => {
  if (address.family !== range.family) return false
  const shift = BigInt((range.family === 4 ? 32 : 128) - range.prefix)
  return address.value >> shift === range.network >> shift
}

/**
 * Whether `address` may use the keys under `allowlist`: an empty list allows any caller (the contract: "empty =
 * any"); otherwise the address must parse and fall in one of the ranges (an unknown address is refused).
 */
export const addressAllowed = (address: string | undefined, allowlist: ReadonlyArray<string>): boolean => {
  if (allowlist.length === 0) return true
  const parsed = address === undefined ? undefined : parseAddress(address)
  if (parsed === undefined) return false
  return allowlist.some((entry) => {
    const range = parseRange(entry)
    return range !== undefined && inRange(parsed, range)
  })
}
