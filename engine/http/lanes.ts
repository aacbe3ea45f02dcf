/**
 * Lanes: fairness between callers on the one event loop `serve` has (issue 25 item 2, E-404). At most `width` requests
 * of one credential are in the engine at once; the caller's further requests wait in its own queue, in arrival order,
 * and start as its earlier ones finish. Requests without a credential (the public and control surfaces) pass straight.
 *
 * Why: the engine's requests are fibers that yield to one another, so the CPU is shared among every request in
 * flight. A partner flooding over 50 connections had 50 in flight, and a quiet partner's request took about fifty
 * times its own cost: its p99 went from 34 ms alone to 1.4 s (docs/performance.md). With lanes the flood has `width`
 * in flight and the quiet partner's request shares the CPU with those only. The flood's own throughput is unchanged
 * while its lane is full: the CPU, not the number of its requests in flight, was its limit.
 */
import { apiKeyFrom } from "./guards/credentials.ts"
import type { EngineRequest } from "./exchange.ts"

/** Requests of one credential in the engine at once. */
export const LANE_WIDTH = 4

interface Lane {
  active: number
  readonly waiting: Array<() => void>
}

export interface Lanes {
  /** Runs `start` when the request's lane has room; `start` receives the function to call once its answer is written. */
  readonly enter: (request: EngineRequest, start: (leave: () => void) => void) => void
}

/** The lane a request waits in: its credential, or none. */
const laneOf = (request: EngineRequest): string | undefined => {
  const key = apiKeyFrom(request.headers)
  return typeof key === "string" ? key : undefined
}

export const makeLanes = (width: number = LANE_WIDTH): Lanes => {
  const lanes = new Map<string, Lane>()
  const enter = (request: EngineRequest, start: (leave: () => void) => void): void => {
    const name = laneOf(request)
    if (name === undefined) {
      start(() => undefined)
      return
    }
    let lane = lanes.get(name)
    if (lane === undefined) {
      lane = { active: 0, waiting: [] }
      lanes.set(name, lane)
    }
    const current = lane
    const run = () => {
      current.active += 1
      let left = false
      start(() => {
        if (left) return
        left = true
        current.active -= 1
        const next = current.waiting.shift()
        if (next !== undefined) next()
        else if (current.active === 0) lanes.delete(name)
      })
    }
    if (current.active < width) run()
    else current.waiting.push(run)
  }
  return { enter }
}
