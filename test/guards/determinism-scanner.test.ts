// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the fixtures are source text, templates included
/**
 * The determinism scanner itself (test/support/determinism.ts): every fixture of a forbidden pattern is caught, and
 * the look-alikes that are fine are not.
 */
import { describe, expect, it } from "vitest"
import { scan, strip } from "../support/determinism.ts"

const APP = "engine/app/x.ts"

/** [fixture, the rule that must catch it]. */
const CAUGHT: ReadonlyArray<readonly [string, string]> = [
  ["const t = Date.now()", "Date.now"],
  ["const t = Date . now ()", "Date.now"],
  ["const f = Date.now", "Date.now"],
  ["const { now } = Date\nconst t = now()", "Date.now"],
  ["const { now: wall } = Date", "Date.now"],
  ["const D = Date\nconst t = D.now()", "Date.now"],
  ["const D = Date\nconst E = D\nE.now()", "Date.now"],
  ["const t = globalThis.Date.now()", "Date.now"],
  ["const t = Date()", "Date() called without new"],
  ["const D = Date\nconst s = D()", "Date() called without new"],
  ["const d = new Date()", "new Date() without arguments"],
  ["const d = new Date", "new Date() without arguments"],
  ["const D = globalThis.Date\nconst d = new D()", "new Date() without arguments"],
  ["const t = performance.now()", "performance.now"],
  ["const t = globalThis.performance.now()", "performance.now"],
  ["const { now } = performance", "performance.now"],
  ['import { performance as p } from "node:perf_hooks"\nconst t = p.now()', "performance.now"],
  ["const log = `took ${performance.now()} ms`", "performance.now"],
  ["const t = process.hrtime.bigint()", "process.hrtime/uptime"],
  ["const t = yield* Clock.currentTimeMillis", "Effect Clock"],
  ["const t = yield* Clock.currentTimeNanos", "Effect Clock"],
  ["const clock = yield* Clock", "yield* Clock"],
  ['import { Clock as C } from "effect"\nconst t = yield* C.currentTimeMillis', "Effect Clock"],
  ['import * as C from "effect/Clock"\nconst t = yield* C.currentTimeMillis', "Effect Clock"],
  ['import { currentTimeMillis } from "effect/Clock"', "Effect Clock"],
  ["const { currentTimeMillis } = Clock", "Effect Clock"],
  ["const c = yield* Effect.clock", "Effect.clock"],
  ["const now = yield* DateTime.now", "DateTime.now"],
  ["const now = DateTime.unsafeNow()", "DateTime.now"],
  ["const now = DateTime.nowUnsafe()", "DateTime.now"],
  ['import { nowUnsafe } from "effect/DateTime"', "DateTime.now"],
  ["yield* Effect.sleep(1000)", "Effect.sleep/delay/timeout"],
  ["yield* Effect.sleep(Duration.seconds(1))", "Effect.sleep/delay/timeout"],
  ['import { Effect as E } from "effect"\nyield* E.sleep(5)', "Effect.sleep/delay/timeout"],
  ["const x = work.pipe(Effect.delay(5))", "Effect.sleep/delay/timeout"],
  ["const x = work.pipe(Effect.timeout(5))", "Effect.sleep/delay/timeout"],
  ['const x = work.pipe(Effect.repeat(Schedule.spaced("1 second")))', "Schedule"],
  ["const x = Schedule.fixed(1000)", "Schedule"],
  ["setTimeout(f, 1)", "setTimeout/setInterval/setImmediate"],
  ["setInterval(f, 1)", "setTimeout/setInterval/setImmediate"],
  ["setImmediate(f)", "setTimeout/setInterval/setImmediate"],
  ["globalThis.setTimeout(f, 1)", "setTimeout/setInterval/setImmediate"],
  ['import { setTimeout as sleep } from "node:timers/promises"', "setTimeout/setInterval/setImmediate"],
  ['import { scheduler } from "node:timers/promises"\nawait scheduler.wait(5)', "node:timers"],
  ["const r = Math.random()", "Math.random"],
  ["const { random } = Math", "Math.random"],
  ["const M = Math\nM.random()", "Math.random"],
  ["const id = crypto.randomUUID()", "crypto randomness"],
  ['import { randomBytes } from "node:crypto"', "crypto randomness"],
  ['import { randomBytes as rb } from "node:crypto"\nrb(8)', "crypto randomness"],
  ['import { randomInt } from "crypto"', "crypto randomness"],
  ["crypto.getRandomValues(new Uint8Array(8))", "crypto randomness"],
  ['import { webcrypto } from "node:crypto"', "crypto randomness"],
  ["const c = crypto.webcrypto", "crypto randomness"],
  ["const n = yield* Random.nextInt", "Effect Random"],
  ['const f = Date["now"]', "computed access on a time or randomness global"],
  ['const f = globalThis["Date"]', "computed access on a time or randomness global"]
]

/** Fine: pure date arithmetic, the clock seam's helpers, names in comments and strings. */
const CLEAN: ReadonlyArray<string> = [
  "const d = new Date(ms)",
  "const d = new Date(Date.UTC(2026, 0, 1))",
  "const ms = Date.parse(iso)",
  "const s = isoAt(now)",
  "const now = yield* clock.now",
  "const t = yield* EngineClock.use((c) => c.now)",
  "const x: Date = value",
  "// Date.now() and Math.random() in a comment",
  "/* setTimeout(f, 1) */ const a = 1",
  'const s = "Date.now() in a string"',
  "const s = `no ${name} time here: performance.now()`",
  "const re = /Date.now\\(\\)/",
  "queueMicrotask(f)",
  "process.nextTick(f)",
  "const t = TestClock.adjust(1000)",
  "const dateTime = DateTime.make(ms)",
  "const { now } = clock",
  "const x = self.now"
]

describe("determinism scanner", () => {
  it.each(CAUGHT)("catches %j (%s)", (fixture, rule) => {
    const found = scan(APP, fixture)
    expect(found.length, `${fixture} should be caught`).toBeGreaterThan(0)
    expect(found.map((f) => f.replace(/^[^ ]+ /, ""))).toContain(rule)
  })

  it.each(CLEAN)("does not flag %j", (fixture) => {
    expect(scan(APP, fixture)).toEqual([])
  })

  it("reports the line of the use", () => {
    expect(scan(APP, "const a = 1\n/*\n multi-line comment\n*/\nconst t = Date.now()")).toEqual([`${APP}:5: Date.now`])
    expect(scan(APP, "const s = `a\nb`\nconst t = Math.random()")).toEqual([`${APP}:3: Math.random`])
  })

  it("strips comments and strings but keeps template code", () => {
    const { code, strings } = strip('const a = "x" // c\nconst b = `t ${f("y")} u`')
    expect(code).not.toContain("// c")
    expect(code).toContain("f(")
    expect(strings).toEqual(["x", "t ", "y", " u"])
  })

  it("lets the allowlist through only for its kinds", () => {
    expect(scan("engine/sim/clock.ts", "Date.now(); Math.random(); setTimeout(f, 1)")).toEqual([])
    expect(scan("engine/cli/main.ts", "const t = performance.now()")).toEqual([])
    expect(scan("engine/cli/main.ts", "const r = Math.random()")).toEqual(["engine/cli/main.ts:1: Math.random"])
    expect(scan("engine/http/server.ts", "setTimeout(close, 5000).unref()")).toEqual([])
    expect(scan("engine/http/server.ts", "const t = Date.now()")).toEqual(["engine/http/server.ts:1: Date.now"])
    expect(scan("engine/store/pg-temp-db.ts", 'import { randomBytes } from "node:crypto"')).toEqual([])
    expect(scan("engine/store/memory.ts", 'import { randomBytes } from "node:crypto"')).toHaveLength(1)
  })
})
