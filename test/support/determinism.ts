/**
 * The determinism rule as code: engine files outside the seam implementations must not reach for real time or
 * randomness. Used by test/guards/determinism.test.ts.
 */
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join, relative } from "node:path"

export const ROOT = join(import.meta.dirname, "..", "..")
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

export const walk = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? walk(path) : path.endsWith(".ts") ? [path] : []
  })

/** Strips comments so documentation may name the forbidden calls. */
const code = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:])\/\/.*$/gm, "$1")

export const violations = (files: ReadonlyArray<{ path: string; text: string }>) =>
  files.flatMap(({ path, text }) => (SEAMS.has(path) ? [] : FORBIDDEN.filter(([, re]) => re.test(code(text))).map(([what]) => `${path}: ${what}`)))

export const engineFiles = () => walk(join(ROOT, "engine")).map((path) => ({ path: relative(ROOT, path), text: readFileSync(path, "utf8") }))
