/**
 * Where a measured stretch allocates: V8's sampling heap profiler, counting objects the scavenger collected too,
 * summed per function (self) and printed to stderr, as bytes per `units` (pairs). Used by alloc-http.ts under
 * ALLOC_SITES=<pairs>; a tool to find allocations, not a measure of their total (alloc-http.ts gives that).
 */
import { Session } from "node:inspector/promises"

interface Node {
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }
  readonly selfSize: number
  readonly children: ReadonlyArray<Node>
}

const session = new Session()

export const startSampling = async () => {
  session.connect()
  await session.post("HeapProfiler.enable")
  await session.post("HeapProfiler.startSampling", { samplingInterval: 512, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true })
}

export const stopSampling = async (units: number) => {
  const { profile } = (await session.post("HeapProfiler.stopSampling")) as unknown as { profile: { head: Node } }
  const self = new Map<string, number>()
  const callers = new Map<string, number>()
  const wanted = process.env.ALLOC_CALLERS
  const name = (f: Node["callFrame"]) => `${f.functionName || "(anon)"} ${f.url.replace(/.*\/(node_modules\/|wt-[^/]+\/)/, "")}:${f.lineNumber + 1}`
  const walk = (node: Node, stack: ReadonlyArray<string>) => {
    const key = name(node.callFrame)
    self.set(key, (self.get(key) ?? 0) + node.selfSize)
    // ALLOC_CALLERS=<text>: the bytes of the functions whose name holds it, by their three nearest callers.
    if (wanted !== undefined && key.includes(wanted) && node.selfSize > 0) {
      const path = [...stack.slice(-3), key].join(" < ")
      callers.set(path, (callers.get(path) ?? 0) + node.selfSize)
    }
    for (const child of node.children) walk(child, [...stack, key])
  }
  walk(profile.head, [])
  const total = [...self.values()].reduce((a, b) => a + b, 0)
  console.error(`sampled ${(total / units / 1024).toFixed(1)} KB per unit`)
  for (const [key, bytes] of [...callers].sort((a, b) => b[1] - a[1]).slice(0, 30)) console.error(`${(bytes / units).toFixed(0).padStart(7)} B  ${key}`)
  for (const [key, bytes] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 400)) console.error(`${(bytes / units).toFixed(0).padStart(7)} B  ${key}`)
}
