// @ts-check
/**
 * A cap on V8's young generation for `serve` (E-358). Node 24 lets the young generation grow to 64 MB per semi-space
 * under a steady write load; every scavenge then copies what the requests since the last one kept, megabytes of it,
 * in one pause of 25 to 40 ms on one core, and every request in flight waits that long. A smaller young generation
 * collects as often as it fills and copies a few megabytes at most each time.
 *
 * Node reads `--max-semi-space-size` only when the process starts, and `serve` runs in the process it was started in
 * (a re-exec would cost start-up and change the pid the benchmarks and process managers watch). V8 reads its growth
 * factor each time it grows the young generation, so the cap is kept here: after each young collection, growth is
 * allowed while one more stays within the cap and stopped otherwise. V8 never shrinks the young generation for a
 * factor, so the cap starts with the process (bin.ts), before loading the engine grows it; serve's flag is read
 * from the command line here, and parsed (for --help and its errors) with serve's other flags. The notices of
 * collections come on the event loop (a PerformanceObserver), so they are timely under load and absent while the
 * engine loads, which therefore runs with growth stopped.
 *
 * Plain JavaScript (types in JSDoc, checked by tsc) because the launcher imports it before anything else: a TypeScript
 * module there makes Node load its type stripper (amaro) at every start, some 50 to 100 ms (E-531).
 */
import { PerformanceObserver, constants } from "node:perf_hooks"
import { getHeapSpaceStatistics, setFlagsFromString } from "node:v8"

/**
 * serve's default cap (MB; both semi-spaces): E-358 chose 16. E-481 tried 8, which copies less per scavenge (540 ->
 * 330 KB under a 50-connection flood) but scavenges twice as often: on an idle machine it cost quote->trade 23% more
 * CPU per pair (696 against 564 µs) for no gain in a quiet partner's p99 under a flood (1.67x against 1.57x), so 16.
 */
export const DEFAULT_YOUNG_GENERATION_MB = 16
const FLAG = "--young-generation-mb"

/** The cap a `sokoni` command line asks for: serve's flag, or its default; 0 (V8's own sizing) for other commands. */
/** @type {(args: ReadonlyArray<string>) => number} */
export const youngGenerationCapOf = (args) => {
  if (args[0] !== "serve") return 0
  const at = args.findIndex((a) => a === FLAG || a.startsWith(`${FLAG}=`))
  if (at === -1) return DEFAULT_YOUNG_GENERATION_MB
  const given = /** @type {string} */ (args[at])
  const raw = given.includes("=") ? given.slice(FLAG.length + 1) : args[at + 1]
  const mb = Number(raw)
  // A value that is not a whole number is left to serve's flag parser to refuse, with its usual message.
  return Number.isInteger(mb) && mb >= 0 ? mb : 0
}

/** V8's own growth factor (each growth doubles the semi-space), restored while the young generation is below the cap. */
const V8_GROWTH_FACTOR = 2

/** The young generation's size now (new space, both semi-spaces), as V8 reports it. */
/** @type {() => number} */
export const youngGenerationBytes = () => getHeapSpaceStatistics().find((s) => s.space_name === "new_space")?.space_size ?? 0

/**
 * Growth allowed while one more growth stays within `capBytes`, stopped once it would pass it: what the observer
 * decides after a young collection, given the young generation's size then and whether growth is stopped now. Returns
 * the factor to set, or undefined to leave it. Deciding one growth ahead leaves room for a collection that grows the
 * young generation before the observer has run (its notices come after the collection, on the event loop).
 */
/** @type {(sizeBytes: number, capBytes: number, stopped: boolean) => number | undefined} */
export const growthFactorFor = (sizeBytes, capBytes, stopped) => {
  const wouldPass = sizeBytes * V8_GROWTH_FACTOR > capBytes
  if (!stopped && wouldPass) return 1
  if (stopped && !wouldPass) return V8_GROWTH_FACTOR
  return undefined
}

/**
 * What the cap reads of V8 and tells it; the process's own V8 unless a test passes its own.
 * @typedef {{ readonly youngBytes: () => number, readonly setFlags: (flags: string) => void }} YoungGenerationV8
 */

/** @type {YoungGenerationV8} */
const processV8 = { youngBytes: youngGenerationBytes, setFlags: setFlagsFromString }

/**
 * Keeps the young generation at or below `capMb` (the new space V8 reports: both semi-spaces) for the life of the
 * process; 0 leaves V8's own sizing. Returns a function that stops the observer and gives V8 its growth back.
 */
/** @type {(capMb: number, v8?: YoungGenerationV8) => () => void} */
export const capYoungGeneration = (capMb, v8 = processV8) => {
  if (capMb <= 0) return () => {}
  const capBytes = capMb * 1024 * 1024
  // Growth starts stopped: loading the engine runs no macrotask, so no notice of a collection arrives before it has
  // loaded, and V8 alone would have grown the young generation to 64 MB by then. The first notice after it allows
  // growth up to the cap.
  v8.setFlags("--semi-space-growth-factor=1")
  let stopped = true
  const apply = () => {
    const factor = growthFactorFor(v8.youngBytes(), capBytes, stopped)
    if (factor === undefined) return
    v8.setFlags(`--semi-space-growth-factor=${factor}`)
    stopped = factor === 1
  }
  const observer = new PerformanceObserver((list) => {
    /** @type {(entry: PerformanceEntry) => boolean} */
    const minor = (entry) => /** @type {{ detail?: { kind?: number } }} */ (entry).detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR
    if (list.getEntries().some(minor)) apply()
  })
  observer.observe({ entryTypes: ["gc"] })
  return () => {
    observer.disconnect()
    if (stopped) v8.setFlags(`--semi-space-growth-factor=${V8_GROWTH_FACTOR}`)
  }
}
