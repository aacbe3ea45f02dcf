/**
 * Loaded into the engine's process by stalls.ts (`node --import`): prints, as `PROBE {json}` lines on stderr, every
 * garbage collection of 2 ms or more (its kind and wall-clock start, and the heap then) and, every 100 ms, the
 * event loop's longest delay over that interval, so stalls.ts can set partner A's slow requests against them.
 */
import { constants, monitorEventLoopDelay, PerformanceObserver, performance } from "node:perf_hooks"

const KINDS: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: "scavenge",
  [constants.NODE_PERFORMANCE_GC_MAJOR]: "mark-compact",
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: "incremental",
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: "weak-callbacks"
}
const wall = (at: number) => performance.timeOrigin + at
const emit = (record: Record<string, unknown>) => process.stderr.write(`PROBE ${JSON.stringify(record)}\n`)

new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    if (entry.duration < 2) continue
    const kind = (entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind ?? 0
    emit({ gc: KINDS[kind] ?? String(kind), start: wall(entry.startTime), ms: entry.duration, heapMB: process.memoryUsage().heapUsed / 2 ** 20 })
  }
}).observe({ entryTypes: ["gc"] })

const delay = monitorEventLoopDelay({ resolution: 1 })
delay.enable()
setInterval(() => {
  emit({ loop: performance.timeOrigin + performance.now(), maxMs: delay.max / 1e6 })
  delay.reset()
}, 100).unref()
