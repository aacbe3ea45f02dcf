/**
 * Lanes (E-404, E-354, E-355): a credential's requests start in turns of rounds, one per lane per round and
 * round-robin, never more than `width` of a lane in the engine, for a turn's budget of time; a request without a
 * credential is not held. Turns are run by hand here, on a clock that moves only when a test moves it.
 */
import { describe, expect, it } from "vitest"
import type { EngineRequest } from "../../engine/http/exchange.ts"
import { makeLanes, TURN_BUDGET_MS } from "../../engine/http/lanes.ts"

const request = (headers: Record<string, string>): EngineRequest => ({
  method: "GET",
  path: "/api/sandbox/v1/partner/stocks",
  query: new URLSearchParams(),
  search: "",
  headers,
  body: undefined
})

const FLOOD = { "x-api-key": "sk_sandbox_flood" }
const QUIET = { "x-api-key": "sk_sandbox_quiet" }

/**
 * Lanes whose turns wait to be run by `runTurn`; `send` records each start and keeps its leave. Each start moves the
 * clock by `startCost` ms (0: a turn never spends its budget, so it runs one round).
 */
const harness = (width: number, startCost = TURN_BUDGET_MS) => {
  const turns: Array<() => void> = []
  let clock = 0
  const lanes = makeLanes(width, { defer: (turn) => turns.push(turn), now: () => clock })
  const started: Array<string> = []
  const leaves = new Map<string, () => void>()
  const send = (name: string, headers: Record<string, string>, answersAtOnce = false) =>
    lanes.enter(request(headers), (leave) => {
      clock += startCost
      started.push(name)
      if (answersAtOnce) leave()
      else leaves.set(name, leave)
    })
  const runTurn = () => {
    const turn = turns.shift()
    expect(turn, "a turn is booked").toBeDefined()
    turn?.()
  }
  return { send, runTurn, started, leaves, booked: () => turns.length }
}

describe("lanes", () => {
  it("start a lane's requests in arrival order, one a turn, never more than the width in the engine", () => {
    const { send, runTurn, started, leaves, booked } = harness(2)
    send("b1", FLOOD)
    send("b2", { authorization: "Bearer sk_sandbox_flood" })
    send("b3", FLOOD)
    send("b4", FLOOD)
    expect(started).toEqual([])
    runTurn()
    runTurn()
    expect(started).toEqual(["b1", "b2"])
    // the lane is full: no turn is booked until one of its requests leaves
    expect(booked()).toBe(0)
    leaves.get("b2")?.()
    leaves.get("b2")?.() // leaving twice frees one place only
    runTurn()
    expect(started).toEqual(["b1", "b2", "b3"])
    expect(booked()).toBe(0)
    leaves.get("b1")?.()
    runTurn()
    expect(started).toEqual(["b1", "b2", "b3", "b4"])
  })

  it("give a quiet partner's request the next turn, however many of a flood's arrived before it", () => {
    const { send, runTurn, started } = harness(4)
    // the flood's requests answer without yielding (the memory store): they never fill the lane's width
    for (let i = 1; i <= 50; i++) send(`b${i}`, FLOOD, true)
    send("a1", QUIET, true)
    runTurn()
    expect(started).toEqual(["b1", "a1"])
    send("a2", QUIET, true)
    runTurn()
    expect(started).toEqual(["b1", "a1", "b2", "a2"])
    runTurn()
    expect(started.slice(4)).toEqual(["b3"])
  })

  it("go on starting requests, round after round, until the turn's budget is spent", () => {
    const { send, runTurn, started, booked } = harness(4, TURN_BUDGET_MS / 4)
    for (let i = 1; i <= 10; i++) send(`b${i}`, FLOOD, true)
    send("a1", QUIET, true)
    send("a2", QUIET, true)
    runTurn()
    // four starts spend the budget: two rounds of the flood and the quiet partner, in turn
    expect(started).toEqual(["b1", "a1", "b2", "a2"])
    expect(booked()).toBe(1)
    runTurn()
    expect(started.slice(4)).toEqual(["b3", "b4", "b5", "b6"])
  })

  it("put a lane served in a round behind the lanes that were not, so the next round starts with those", () => {
    const { send, runTurn, started, leaves } = harness(1)
    send("a1", QUIET)
    send("b1", FLOOD)
    runTurn()
    expect(started).toEqual(["a1", "b1"])
    send("a2", QUIET)
    send("b2", FLOOD)
    // only the quiet lane has room: its a2 starts, and it goes behind the flood's lane
    leaves.get("a1")?.()
    runTurn()
    expect(started.slice(2)).toEqual(["a2"])
    send("a3", QUIET)
    leaves.get("a2")?.()
    leaves.get("b1")?.()
    runTurn()
    expect(started.slice(3)).toEqual(["b2", "a3"])
  })

  it("let a request without a credential start at once", () => {
    const { send, started } = harness(1)
    send("b1", FLOOD)
    send("public", {})
    expect(started).toEqual(["public"])
  })

  it("let a request whose two key headers disagree start at once: it has no one credential (the guard refuses it)", () => {
    const { send, started } = harness(1)
    send("b1", FLOOD)
    send("mixed", { "x-api-key": "sk_sandbox_flood", authorization: "Bearer sk_sandbox_quiet" })
    expect(started).toEqual(["mixed"])
  })

  it("book no turn while a lane has nothing waiting, nor once every request of it has left", () => {
    const { send, runTurn, started, leaves, booked } = harness(2)
    send("b1", FLOOD)
    runTurn()
    expect(started).toEqual(["b1"])
    // b1 is in the engine and the lane has room, but nothing to start: a turn would only spin
    expect(booked()).toBe(0)
    leaves.get("b1")?.()
    expect(booked()).toBe(0)
  })

  it("queue a lane whose requests had all left behind the lanes that came while it was empty", () => {
    const { send, runTurn, started } = harness(4)
    send("a1", QUIET, true)
    runTurn()
    send("b1", FLOOD, true)
    send("a2", QUIET, true)
    runTurn()
    expect(started).toEqual(["a1", "b1", "a2"])
  })

  it("keep counting a lane's requests in the engine while none of its requests waits", () => {
    const { send, runTurn, started, leaves, booked } = harness(2)
    send("b1", FLOOD)
    send("b2", FLOOD)
    runTurn()
    runTurn()
    leaves.get("b2")?.()
    // b1 is still in the engine: of two more, one may start
    send("b3", FLOOD)
    send("b4", FLOOD)
    runTurn()
    expect(started).toEqual(["b1", "b2", "b3"])
    expect(booked()).toBe(0)
  })
})
