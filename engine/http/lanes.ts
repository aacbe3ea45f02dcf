/**
 * Lanes: fairness between callers on the one event loop `serve` has (issue 25 item 2, E-404, E-354, E-355). Each
 * credential's requests wait in its own lane, in arrival order. They start in turns: a turn runs rounds, each starting
 * at most one request of each lane (round-robin) that has fewer than `width` of its requests in the engine, for about
 * TURN_BUDGET_MS; the next turn comes after node has read the sockets again. Requests without a credential (the public
 * and control surfaces) pass straight.
 *
 * Why turns, not only a width (E-354): on the memory store most requests run to their answer without yielding, so a
 * lane's requests were never "in the engine" for long and the width held nothing back. Node reads every readable
 * socket in one pass, and a flood over 50 connections put 50 requests in that pass: a quiet partner's request ran
 * after all of them (measured: 54 of the flood's answers, median, during each of the quiet partner's requests). In
 * turns, the quiet partner's request waits for the turn under way (at most TURN_BUDGET_MS and one request), then for
 * at most one of the flood's per round, whatever the flood's connection count. Why a width as well: on PostgreSQL a
 * request waits on the database, and its lane may start another meanwhile, up to `width`.
 */
import { apiKeyFrom } from "./guards/credentials.ts"
import type { EngineRequest } from "./exchange.ts"
import { afterIo, processUptimeMs } from "../sim/clock.ts"

/** Requests of one credential in the engine at once. */
export const LANE_WIDTH = 4

interface Lane {
  active: number
  readonly waiting: Array<() => void>
}

export interface Lanes {
  /** Runs `start` in the request's lane's turn; `start` receives the function to call once its answer is written. */
  readonly enter: (request: EngineRequest, start: (leave: () => void) => void) => void
}

/** The lane a request waits in: its credential, or none. */
const laneOf = (request: EngineRequest): string | undefined => {
  const key = apiKeyFrom(request.headers)
  return typeof key === "string" ? key : undefined
}

/**
 * How long a turn goes on starting requests, in rounds, before it lets node read the sockets again (E-355). One
 * request per turn cost a loop pass per request: GET /stocks under one partner's 50 connections took 78 µs of CPU per
 * request instead of 63. A request that arrives during a turn waits for the turn's end: this long, plus the request
 * the turn had started.
 */
export const TURN_BUDGET_MS = 0.5

export interface LaneOptions {
  /**
   * Schedules the next turn (after node's next pass over its sockets by default, so a request that arrived meanwhile
   * is in its lane before the turn; a test passes its own to run turns one by one).
   */
  readonly defer?: (turn: () => void) => void
  /** Milliseconds from any fixed origin (the process's uptime by default): a turn's budget is measured on it. */
  readonly now?: () => number
}

export const makeLanes = (width: number = LANE_WIDTH, options: LaneOptions = {}): Lanes => {
  const defer = options.defer ?? afterIo
  const now = options.now ?? processUptimeMs
  /** Lanes with a request waiting or in the engine, in the order turns visit them (a Map keeps insertion order). */
  const lanes = new Map<string, Lane>()
  let turnBooked = false

  const bookTurn = () => {
    if (turnBooked) return
    turnBooked = true
    defer(turn)
  }

  const hasRoom = (lane: Lane) => lane.waiting.length > 0 && lane.active < width
  const anyRoom = () => {
    for (const lane of lanes.values()) if (hasRoom(lane)) return true
    return false
  }
  /** The lanes a round serves, gathered first (serving one moves it to the back of `lanes`); reused, as turns are hot. */
  const ready: Array<string> = []

  /** One request of each lane that has room, in lane order; a lane served goes to the back, so no lane is always first. */
  const round = () => {
    // One lane (one partner's flood, the bench): no order to keep between lanes, so none is gathered or moved.
    if (lanes.size === 1) {
      for (const lane of lanes.values()) if (hasRoom(lane)) lane.waiting.shift()?.()
      return
    }
    ready.length = 0
    lanes.forEach((lane, name) => {
      if (hasRoom(lane)) ready.push(name)
    })
    for (const name of ready) {
      const lane = lanes.get(name)
      if (lane === undefined || !hasRoom(lane)) continue
      lanes.delete(name)
      lanes.set(name, lane)
      lane.waiting.shift()?.()
    }
  }

  /** Rounds until the budget is spent or no lane has room; the next turn is booked while one still has. */
  const turn = () => {
    turnBooked = false
    const started = now()
    do round()
    while (now() - started < TURN_BUDGET_MS && anyRoom())
    if (anyRoom()) bookTurn()
  }

  const enter = (request: EngineRequest, start: (leave: () => void) => void): void => {
    const name = laneOf(request)
    if (name === undefined) {
      start(() => undefined)
      return
    }
    const lane = lanes.get(name) ?? { active: 0, waiting: [] }
    lanes.set(name, lane)
    lane.waiting.push(() => {
      lane.active += 1
      let left = false
      start(() => {
        if (left) return
        left = true
        lane.active -= 1
        if (lane.waiting.length > 0) bookTurn()
        else if (lane.active === 0) lanes.delete(name)
      })
    })
    bookTurn()
  }
  return { enter }
}
