/**
 * Planning a scenario for a target reached over the wire (`sokoni conform`): moving it by whole weeks to a present
 * as open as its written one (a target's clock never goes back), and why it cannot run on a target without the
 * control API. Pure; the run itself is runner.ts's `runScenarioOverWire`.
 */
import { findExchange, holidayOn } from "../engine/domain/calendar.ts"
import { type Scenario, type ScenarioStep, scenarioNeeds, usesReceivers } from "./format.ts"

const WEEK_MS = 7 * 86_400_000
// An instant in UTC (`Z`) or with an offset (`+03:00`, as a partner in Nairobi writes a GTD date): both are shifted.
const ISO_INSTANT = /\b(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}(?::\d{2}(?:\.\d{1,3})?)?)(Z\b|[+-]\d{2}:\d{2}\b)/g
const ISO_DATE = /\b(\d{4}-\d{2}-\d{2})\b(?!T)/g

/**
 * The scenario moved `ms` later (a whole number of weeks): its start and every ISO instant and date in its steps and
 * expectations. Over the wire a target's clock never goes back, so a scenario whose start has passed runs the same
 * weekday and time of a later week. Instants keep their written precision.
 */
export const shiftScenario = (scenario: Scenario, ms: number): Scenario => {
  if (ms === 0) return scenario
  const days = Math.round(ms / 86_400_000)
  const shiftDate = (d: string) => new Date(Date.parse(`${d}T00:00:00.000Z`) + days * 86_400_000).toISOString().slice(0, 10)
  const shiftText = (text: string) =>
    text
      .replace(ISO_INSTANT, (_m, date: string, time: string, zone: string) => `${shiftDate(date)}T${time}${zone}`)
      .replace(ISO_DATE, (_m, date: string) => shiftDate(date))
  const walk = (value: unknown): unknown => {
    if (typeof value === "string") return shiftText(value)
    if (Array.isArray(value)) return value.map(walk)
    if (typeof value === "object" && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v)]))
    return value
  }
  return { ...scenario, start: shiftText(scenario.start), steps: walk(scenario.steps) as ReadonlyArray<ScenarioStep> }
}

/**
 * The whole weeks that move `start` past `now` into a stretch as open as the written one: when no day within a week
 * either side of the written start is a holiday of NSE or JSE (the suites' exchanges; a week either side covers
 * their waits and a week of history), weeks whose stretch has one are passed over, so a shifted scenario meets the
 * same sessions.
 */
export const weeksPast = (start: string, now: number): number => {
  const from = Date.parse(start)
  const exchanges = ["NSE", "JSE"].flatMap((code) => findExchange(code) ?? [])
  const holidayFree = (ms: number) => {
    for (let day = -7; day <= 7; day++) {
      const date = new Date(ms + day * 86_400_000).toISOString().slice(0, 10)
      if (exchanges.some((exchange) => holidayOn(exchange, date) !== undefined)) return false
    }
    return true
  }
  let weeks = Math.ceil((now - from) / WEEK_MS)
  while (holidayFree(from) && !holidayFree(from + weeks * WEEK_MS) && weeks < 520) weeks += 1
  return weeks * WEEK_MS
}

/** Why a scenario cannot run over the wire against this target (each need it cannot give), or undefined when it can. */
export const wireObstacle = (scenario: Scenario, hasControl: boolean): string | undefined => {
  if (hasControl) return undefined
  const why: Array<string> = []
  const needs = scenarioNeeds(scenario)
  if (scenario.ownTarget !== undefined) why.push(`it needs a target of its own: ${scenario.ownTarget} (a fresh world through the control API)`)
  else if (needs.includes("fresh-world")) why.push(`it is tied to its date: ${scenario.dated} (a fresh world through the control API)`)
  if (usesReceivers(scenario)) why.push("it scripts webhook receivers, which need the control API")
  else if (needs.includes("control-api")) why.push("its later steps rest on its clock, desk or price steps, which need the control API")
  if (needs.includes("own-partner")) why.push("it needs a partner of its own (its tier, a seeded wallet), which only the control API makes")
  return why.length === 0 ? undefined : `${why.join("; ")} (--admin-token; or run it in-process with \`sokoni scenario run\`)`
}
