/**
 * Engine code reaches time and randomness only through its seams (EngineClock, Entropy, Scheduler). This test
 * fails when a file outside the seam implementations calls a forbidden global directly.
 */
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join, relative } from "node:path"
import { describe, expect, it } from "vitest"

const ROOT = join(import.meta.dirname, "..", "..")
const ENGINE = join(ROOT, "engine")
/** The seam implementations: the only files allowed to touch real time or entropy. */
const SEAMS = new Set(["engine/sim/clock.ts", "engine/sim/random.ts", "engine/sim/scheduler.ts"])
const FORBIDDEN: ReadonlyArray<[string, RegExp]> = [
  ["Date.now()", /\bDate\.now\s*\(/],
  ["new Date() without arguments", /\bnew\s+Date\s*\(\s*\)/],
  ["Math.random()", /\bMath\.random\s*\(/],
  ["setTimeout", /\bsetTimeout\s*\(/],
  ["setInterval", /\bsetInterval\s*\(/],
  ["performance.now()", /\bperformance\.now\s*\(/],
  ["crypto.randomUUID()", /\brandomUUID\s*\(/]
]

const walk = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? walk(path) : path.endsWith(".ts") ? [path] : []
  })

/** Strips comments so documentation may name the forbidden calls. */
const code = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:])\/\/.*$/gm, "$1")

export const violations = (files: ReadonlyArray<{ path: string; text: string }>) =>
  files.flatMap(({ path, text }) =>
    SEAMS.has(path) ? [] : FORBIDDEN.filter(([, re]) => re.test(code(text))).map(([what]) => `${path}: ${what}`)
  )

describe("determinism guard", () => {
  it("finds no direct use of time or randomness in engine code outside the seams", () => {
    const files = walk(ENGINE).map((path) => ({ path: relative(ROOT, path), text: readFileSync(path, "utf8") }))
    expect(files.length).toBeGreaterThan(10)
    expect(violations(files)).toEqual([])
  })

  it("catches each forbidden call (the guard itself can fail)", () => {
    const samples = ["Date.now()", "new Date()", "Math.random()", "setTimeout(f, 1)", "setInterval(f, 1)", "performance.now()", "crypto.randomUUID()"]
    for (const sample of samples) {
      expect(violations([{ path: "engine/app/x.ts", text: `const x = ${sample}` }])).toHaveLength(1)
    }
    expect(violations([{ path: "engine/app/x.ts", text: "const d = new Date(ms) // Date.now() in a comment" }])).toEqual([])
    expect(violations([{ path: "engine/sim/clock.ts", text: "Date.now()" }])).toEqual([])
  })
})
