/**
 * What a quote->trade pair keeps on the memory store, by kind of object (issue 25 item 2): the in-process pair's
 * engine (in-process.ts) runs a warm-up, then two heap snapshots `pairs` apart; the objects of the second that the
 * first did not have (V8 keeps a node's id across snapshots of one process) are what those pairs left behind. Prints
 * bytes and objects per pair, then the largest kinds: an object by its constructor and first property names (which
 * tells the documents' shapes apart), a string by its length class. Counts and bytes, not times: a busy machine's
 * figure is an idle one's.
 *   KEPT_HOLDERS=REGEX node --expose-gc scripts/bench/kept-pair.ts [pairs, default 2000] [kinds shown, default 40]
 * (KEPT_HOLDERS: also who holds the new objects whose kind matches REGEX, by holder kind and property name)
 */
import { readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { writeHeapSnapshot } from "node:v8"
import { makeEngineHost } from "../../engine/http/engine-host.ts"
import { benchHostConfig, benchPartner, callerOf, json, SANDBOX } from "./in-process.ts"

const PAIRS = Number(process.argv[2] ?? 2000)
const SHOWN = Number(process.argv[3] ?? 40)
const gc = (globalThis as { gc?: () => void }).gc
if (gc === undefined) throw new Error("run with node --expose-gc")

const host = await makeEngineHost(benchHostConfig({ store: "memory" }))
const call = callerOf(host)
const { key, symbol } = await benchPartner(call)
const pairs = async (count: number, tag: string) => {
  for (let i = 0; i < count; i++) {
    const quote = await call("GET", `${SANDBOX}/quote/${symbol}?side=BUY&quantity=1`, key)
    const body = { symbol, type: "BUY", quantity: 1, quoteId: json(quote).quoteId }
    const trade = await call("POST", `${SANDBOX}/trade`, { ...key, "idempotency-key": `kept-${tag}-${String(i).padStart(8, "0")}` }, body)
    if (trade.status !== 202) throw new Error(`trade ${trade.status}`)
  }
}

interface Snapshot {
  readonly snapshot: {
    readonly meta: {
      readonly node_fields: Array<string>
      readonly node_types: [Array<string>]
      readonly edge_fields: Array<string>
      readonly edge_types: [Array<string>]
    }
  }
  readonly nodes: Array<number>
  readonly edges: Array<number>
  readonly strings: Array<string>
}

const snapshotNow = (): Snapshot => {
  gc()
  gc()
  const file = writeHeapSnapshot(join(tmpdir(), `kept-pair-${process.pid}-${Date.now()}.heapsnapshot`))
  const parsed = JSON.parse(readFileSync(file, "utf8")) as Snapshot
  rmSync(file)
  return parsed
}

/** The first snapshot's node ids, sorted, off the heap (a Set of them would be the largest new object itself). */
const idsOf = (s: Snapshot) => {
  const width = s.snapshot.meta.node_fields.length
  const idAt = s.snapshot.meta.node_fields.indexOf("id")
  const ids = new Float64Array(s.nodes.length / width)
  for (let i = 0; i < s.nodes.length; i += width) ids[i / width] = s.nodes[i + idAt] as number
  return ids.sort()
}
const has = (ids: Float64Array, id: number) => {
  let low = 0
  let high = ids.length
  while (low < high) {
    const mid = (low + high) >>> 1
    if ((ids[mid] as number) < id) low = mid + 1
    else high = mid
  }
  return ids[low] === id
}

/** The kinds of the objects `after` has and `before` had not: bytes and count per kind. */
const newKinds = (before: Float64Array, after: Snapshot) => {
  const { meta } = after.snapshot
  const width = meta.node_fields.length
  const [typeAt, nameAt, idAt, sizeAt, edgeCountAt] = ["type", "name", "id", "self_size", "edge_count"].map((f) => meta.node_fields.indexOf(f)) as [
    number,
    number,
    number,
    number,
    number
  ]
  const edgeWidth = meta.edge_fields.length
  const [edgeTypeAt, edgeNameAt] = ["type", "name_or_index"].map((f) => meta.edge_fields.indexOf(f)) as [number, number]
  const propertyType = meta.edge_types[0].indexOf("property")
  const kinds = new Map<string, { bytes: number; count: number }>()
  /** node offset -> its kind, for the new nodes only. */
  const kindAt = new Map<number, string>()
  let edge = 0
  let bytes = 0
  let count = 0
  for (let i = 0; i < after.nodes.length; i += width) {
    const edges = after.nodes[i + edgeCountAt] as number
    const firstEdge = edge
    edge += edges * edgeWidth
    if (has(before, after.nodes[i + idAt] as number)) continue
    const type = meta.node_types[0][after.nodes[i + typeAt] as number] as string
    // Off the V8 heap (an array buffer's store, the embedder's objects): this script's own, not what V8 collects.
    if (type === "native" || type === "synthetic") continue
    const size = after.nodes[i + sizeAt] as number
    let kind: string
    if (type === "string" || type === "concatenated string" || type === "sliced string")
      kind = `${type} of ${size < 64 ? "<64" : size < 256 ? "<256" : size < 1024 ? "<1K" : ">=1K"} B`
    else if (type === "object") {
      const names: Array<string> = []
      for (let e = firstEdge; e < edge && names.length < 6; e += edgeWidth)
        if (after.edges[e + edgeTypeAt] === propertyType) names.push(after.strings[after.edges[e + edgeNameAt] as number] as string)
      kind = `${after.strings[after.nodes[i + nameAt] as number]} {${names.join(",")}}`
    } else kind = `${type} ${(after.strings[after.nodes[i + nameAt] as number] ?? "").slice(0, 40)}`
    kindAt.set(i, kind)
    const k = kinds.get(kind) ?? { bytes: 0, count: 0 }
    k.bytes += size
    k.count++
    kinds.set(kind, k)
    bytes += size
    count++
  }
  return { kinds, bytes, count, kindAt }
}

/** For the new nodes whose kind matches `pattern`: who holds them, as `holder kind . edge`, with their bytes. */
const holders = (after: Snapshot, kindAt: Map<number, string>, pattern: RegExp) => {
  const { meta } = after.snapshot
  const width = meta.node_fields.length
  const [sizeAt, edgeCountAt] = ["self_size", "edge_count"].map((f) => meta.node_fields.indexOf(f)) as [number, number]
  const edgeWidth = meta.edge_fields.length
  const [edgeTypeAt, edgeNameAt, toAt] = ["type", "name_or_index", "to_node"].map((f) => meta.edge_fields.indexOf(f)) as [number, number, number]
  const weak = meta.edge_types[0].indexOf("weak")
  const element = meta.edge_types[0].indexOf("element")
  const hidden = meta.edge_types[0].indexOf("hidden")
  const out = new Map<string, { bytes: number; count: number }>()
  let edge = 0
  for (let i = 0; i < after.nodes.length; i += width) {
    const end = edge + (after.nodes[i + edgeCountAt] as number) * edgeWidth
    const holder = kindAt.get(i) ?? "(old)"
    for (; edge < end; edge += edgeWidth) {
      const type = after.edges[edge + edgeTypeAt] as number
      if (type === weak) continue
      const to = after.edges[edge + toAt] as number
      const kind = kindAt.get(to)
      if (kind === undefined || !pattern.test(kind)) continue
      const name =
        type === element || type === hidden
          ? `[${type === hidden ? "h" : ""}${after.edges[edge + edgeNameAt]}]`
          : after.strings[after.edges[edge + edgeNameAt] as number]
      const key = `${kind} <- ${holder.slice(0, 60)} .${type === element ? "[i]" : name}`
      const k = out.get(key) ?? { bytes: 0, count: 0 }
      k.bytes += after.nodes[to + sizeAt] as number
      k.count++
      out.set(key, k)
    }
  }
  return out
}

await pairs(1000, "warm")
const before = idsOf(snapshotNow())
await pairs(PAIRS, "measured")
const after = snapshotNow()
const { kinds, bytes, count, kindAt } = newKinds(before, after)
console.log(`${PAIRS} pairs keep ${(bytes / PAIRS).toFixed(0)} B in ${(count / PAIRS).toFixed(1)} objects per pair`)
for (const [kind, k] of [...kinds].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, SHOWN))
  console.log(`${(k.bytes / PAIRS).toFixed(1).padStart(8)} B ${(k.count / PAIRS).toFixed(2).padStart(6)}  ${kind}`)
const pattern = process.env.KEPT_HOLDERS
if (pattern !== undefined) {
  console.log(`held by (an object held twice counts twice):`)
  for (const [key, k] of [...holders(after, kindAt, new RegExp(pattern))].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, SHOWN))
    console.log(`${(k.bytes / PAIRS).toFixed(1).padStart(8)} B ${(k.count / PAIRS).toFixed(2).padStart(6)}  ${key}`)
}
await host.stop()
