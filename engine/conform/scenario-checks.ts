/**
 * The scenario suites of `sokoni conform` (issue 10, part 1c): every scenario of scenarios/<suite>/*.yaml run over
 * the wire against the target (scenarios/runner.ts `runScenarioOverWire`), one check per scenario, with its timeline
 * of requests, events and deliveries on the target's clock for the HTML report.
 * Owns turning a scenario run into a check. Does not own the scenario format nor the runner.
 *
 * With a control API nothing is skipped: scripted webhook receivers are the control API's (`/_sim/receivers`), and
 * the scenarios that need a world of their own (`ownTarget`, `dated`) run last, each after the target starts over at
 * its start (`POST /_sim/reset`, E-243). Without one, what cannot run is skipped with its reason (receivers, a target
 * of its own, every step a control step), and a scenario's control steps are skipped and counted.
 */
import { readdirSync, readFileSync } from "node:fs"
import { join, relative } from "node:path"
import type { TimelineEntry } from "../report/model.ts"
import type { RegisteredCheck } from "./conform.ts"

const SCENARIOS = join(import.meta.dirname, "..", "..", "scenarios")

/** A scenario's start as written (ISO sorts as time), read without parsing the whole file. */
const startOf = (text: string) => /^start:\s*['"]?([0-9T:.Z-]+)/m.exec(text)?.[1] ?? ""

/** Whether it needs a world of its own over the wire (scenarios/runner.ts `needsFreshWorld`), read the same way. */
const needsFreshWorld = (text: string) => /^(ownTarget|dated):/m.test(text)

/**
 * Suites whose data is placed around the engine's start (the subscription offers' windows, domain/reference/offers.ts):
 * they run first, while the target is still near its start.
 */
const EARLY_SUITES = ["subscriptions"]

/**
 * Every scenario file, the early suites first, then earliest start first (then by path): over the wire a target's
 * clock only moves forward, and a scenario whose start has passed is moved by whole weeks (E-195). Those that need a
 * world of their own come last (each starts the target over, which ends every other check's state: E-243).
 */
export const scenarioFiles = (dir = SCENARIOS): ReadonlyArray<string> =>
  readdirSync(dir, { recursive: true })
    .map(String)
    .filter((f) => f.endsWith(".yaml"))
    .map((f) => join(dir, f))
    .map((file) => {
      const text = readFileSync(file, "utf8")
      const rank = needsFreshWorld(text) ? 2 : EARLY_SUITES.some((suite) => file.includes(`/${suite}/`)) ? 0 : 1
      return { file, start: startOf(text), rank }
    })
    .sort((a, b) => a.rank - b.rank || a.start.localeCompare(b.start) || a.file.localeCompare(b.file))
    .map((s) => s.file)

export const scenarioChecks = (dir = SCENARIOS): ReadonlyArray<RegisteredCheck> =>
  scenarioFiles(dir).map((file): RegisteredCheck => {
    const path = relative(dir, file)
    const suite = path.split("/")[0] ?? "scenarios"
    return {
      id: "scenario",
      suite: `scenario ${suite}`,
      name: `scenario: ${path}`,
      run: async (ctx) => {
        const { loadScenario, runScenarioOverWire } = await import("../../scenarios/runner.ts")
        const scenario = await loadScenario(file)
        const result = await runScenarioOverWire(scenario, {
          base: ctx.wire.base,
          adminToken: ctx.wire.adminToken,
          sandboxKey: ctx.wire.sandboxKey,
          liveKey: ctx.wire.liveKey,
          seed: ctx.seed,
          // Its requests join the run's history (when conform records one).
          fetch: ctx.target.recordingFetch(ctx.wire.fetch ?? globalThis.fetch),
          pathOf: ctx.wire.pathOf,
          // A target keeps its idempotency store from run to run, and without a control API every scenario shares one
          // partner: the keys are this run's and this scenario's own (E-284).
          idempotencyPrefix: `conform-${ctx.seed}-${ctx.startedAt.toString(36)}-${path.replace(/\.yaml$/, "").replace(/\W+/g, "-")}`
        })
        if (result.skipped !== undefined) return { status: "skipped", message: `${scenario.name}: ${result.skipped}`, exchanges: [] }
        const timeline: Array<TimelineEntry> = []
        let last = scenario.start
        for (const step of result.steps) {
          const at = step.at ?? last
          last = at
          if (step.skipped !== undefined) {
            timeline.push({ at, kind: "note", text: `${step.label}: skipped, ${step.skipped}` })
            continue
          }
          const kind = step.label.startsWith("advance") ? "clock" : "request"
          timeline.push({
            at,
            kind,
            text: `${step.label}${step.status === undefined ? "" : ` -> ${step.status}`}${step.ok ? "" : `  FAILED: ${step.problems[0] ?? ""}`}`
          })
          for (const e of step.events ?? []) timeline.push({ at: e.at === "" ? at : e.at, kind: "event", text: e.event })
          for (const d of step.received ?? []) timeline.push({ at, kind: "delivery", text: d })
        }
        const failed = result.steps.filter((s) => !s.ok)
        const skipped = result.steps.filter((s) => s.skipped !== undefined).length
        if (failed.length > 0)
          return {
            status: "failed",
            message: `${scenario.name}: step ${(failed[0]?.index ?? 0) + 1} "${failed[0]?.label}": ${failed[0]?.problems.slice(0, 2).join("; ")} (in-process: npx sokoni scenario run scenarios/${path} --seed ${ctx.seed})`,
            exchanges: [],
            timeline
          }
        return {
          status: "passed",
          message: `${scenario.name}: ${result.steps.length - skipped} steps passed${skipped === 0 ? "" : `, ${skipped} skipped (they need the control API)`}${result.freshWorld === true ? " (on a fresh world: POST /_sim/reset)" : ""}`,
          exchanges: [],
          timeline
        }
      }
    }
  })
