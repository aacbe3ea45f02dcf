/**
 * The determinism rule as code: engine files outside the seam implementations must not reach for real time, timers
 * or randomness. Used by test/guards/determinism.test.ts (the engine) and test/guards/determinism-scanner.test.ts
 * (the scanner itself, one fixture per pattern).
 *
 * A source scan, not a type-aware analysis: comments and string contents are removed first (template `${…}` code
 * is kept), `globalThis.`/`global.`/`window.` prefixes are dropped, simple aliases are resolved (`const D = Date`,
 * `import { Clock as C } from "effect"`, `import * as C from "effect/Clock"`, `import { performance as p } from
 * "node:perf_hooks"`), destructuring from a forbidden object is read as member access (`const { now } = Date` is
 * `Date.now`), and computed access on those objects (`Date["now"]`) is refused outright.
 */
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join, relative } from "node:path"

export const ROOT = join(import.meta.dirname, "..", "..")

/** time: reading a clock; timer: waiting on real time; random: entropy; dynamic: computed access we cannot read. */
export type Kind = "time" | "timer" | "random" | "dynamic"
const ALL: ReadonlyArray<Kind> = ["time", "timer", "random", "dynamic"]

/** Who may do what, and why. Everything else in engine/ must go through EngineClock, Scheduler and Entropy. */
export const ALLOW: ReadonlyArray<{ readonly path: string; readonly kinds: ReadonlyArray<Kind>; readonly why: string }> = [
  { path: "engine/sim/clock.ts", kinds: ALL, why: "the clock seam" },
  { path: "engine/sim/random.ts", kinds: ALL, why: "the entropy seam" },
  { path: "engine/sim/scheduler.ts", kinds: ALL, why: "the scheduler seam (its loop sleeps on the clock)" },
  { path: "engine/cli/", kinds: ["time"], why: "the CLI reads wall time to choose a start and to say how long start-up took" },
  // The HTTP transport (node:http), not engine logic: shutdown grace and socket timeouts are real time by nature.
  // node-server.ts is today's name; server.ts is the rewrite's.
  { path: "engine/http/server.ts", kinds: ["timer"], why: "HTTP transport: shutdown and socket timeouts" },
  { path: "engine/http/node-server.ts", kinds: ["timer"], why: "HTTP transport: shutdown and socket timeouts" },
  {
    path: "engine/sim/outbound.ts",
    kinds: ["time", "timer"],
    why: "the network seam: real fetch measures latency and aborts after the webhook timeout (the simulated receivers read no real time)"
  },
  { path: "engine/load/", kinds: ["time", "timer"], why: "paces requests to engine processes over real sockets in real time: a load tool, not engine logic" },
  { path: "engine/store/pg-temp-db.ts", kinds: ["random"], why: "names a throwaway database for a scenario run; never in a trace" }
]

const allowed = (path: string, kind: Kind) => ALLOW.some((a) => (a.path.endsWith("/") ? path.startsWith(a.path) : path === a.path) && a.kinds.includes(kind))

interface Rule {
  readonly what: string
  readonly kind: Kind
  readonly re: RegExp
}

const RULES: ReadonlyArray<Rule> = [
  { what: "Date.now", kind: "time", re: /\bDate\s*\.\s*now\b/g },
  { what: "Date() called without new", kind: "time", re: /(?<![\w$.])(?<!\bnew\s+)Date\s*\(/g },
  { what: "new Date() without arguments", kind: "time", re: /\bnew\s+Date\b(?!\s*\(\s*[^\s)])/g },
  { what: "performance.now", kind: "time", re: /\bperformance\s*\.\s*(?:now|timeOrigin)\b/g },
  { what: "process.hrtime/uptime", kind: "time", re: /\bprocess\s*\.\s*(?:hrtime|uptime)\b/g },
  { what: "Effect Clock", kind: "time", re: /\bClock\s*\.\s*(?:currentTimeMillis|currentTimeNanos|clockWith|Clock)\b/g },
  { what: "yield* Clock", kind: "time", re: /\byield\s*\*\s*Clock\b/g },
  { what: "Effect.clock", kind: "time", re: /\bEffect\s*\.\s*clock(?:With)?\b/g },
  { what: "DateTime.now", kind: "time", re: /\bDateTime\s*\.\s*(?:now|unsafeNow|nowUnsafe|nowInCurrentZone|nowAsDate)\b/g },
  { what: "Effect.sleep/delay/timeout", kind: "timer", re: /\bEffect\s*\.\s*(?:sleep|delay|timeout\w*|schedule\w*)\b/g },
  { what: "Schedule", kind: "timer", re: /\bSchedule\s*\.\s*[A-Za-z_$]/g },
  { what: "setTimeout/setInterval/setImmediate", kind: "timer", re: /\bset(?:Timeout|Interval|Immediate)\b/g },
  { what: "node:timers", kind: "timer", re: /\bnode:timers\b/g },
  { what: "Math.random", kind: "random", re: /\bMath\s*\.\s*random\b/g },
  {
    what: "crypto randomness",
    kind: "random",
    re: /\b(?:randomUUID|randomBytes|randomInt|randomFill(?:Sync)?|getRandomValues|webcrypto|generateKey(?:Pair)?(?:Sync)?|generatePrime(?:Sync)?)\b/g
  },
  { what: "Effect Random", kind: "random", re: /\bRandom\s*\.\s*(?:next\w*|shuffle|choice)\b|\byield\s*\*\s*Random\b/g },
  { what: "computed access on a time or randomness global", kind: "dynamic", re: /\b(?:Date|performance|Math|crypto|Clock|DateTime|globalThis)\s*\[/g }
]

/** The objects an alias or a destructuring may stand for. */
const TARGETS = ["Date", "performance", "Math", "crypto", "Clock", "DateTime", "Schedule", "Effect", "Random", "process"]
const TARGET = TARGETS.join("|")

const KEYWORDS_BEFORE_REGEX = /(?:^|[^\w$])(?:return|typeof|case|do|else|in|of|yield|await|void|delete|new|throw)$/

/**
 * Removes comments (newlines kept, so line numbers hold) and replaces every string by `"#n"`, its index in
 * `strings`; template literals keep their `${…}` code. Regex literals become `/ /`.
 */
export const strip = (text: string): { readonly code: string; readonly strings: ReadonlyArray<string> } => {
  const strings: Array<string> = []
  let out = ""
  let i = 0
  const newlines = (s: string) => s.replace(/[^\n]/g, "")
  const regexAllowed = () => {
    const before = out.replace(/\s+$/, "")
    return before === "" || /[(,=:[!&|?{};+\-*%<>~^]$/.test(before) || KEYWORDS_BEFORE_REGEX.test(before)
  }
  // Scans code until the end, or (inTemplate) until the `}` that closes a `${`.
  const scanCode = (inTemplate: boolean): void => {
    let depth = 0
    while (i < text.length) {
      const c = text[i]!
      const d = text[i + 1]
      if (c === "/" && d === "/") {
        while (i < text.length && text[i] !== "\n") i++
      } else if (c === "/" && d === "*") {
        const end = text.indexOf("*/", i + 2)
        const stop = end < 0 ? text.length : end + 2
        out += ` ${newlines(text.slice(i, stop))}`
        i = stop
      } else if (c === '"' || c === "'") {
        let j = i + 1
        let body = ""
        while (j < text.length && text[j] !== c && text[j] !== "\n") {
          if (text[j] === "\\") {
            body += text.slice(j, j + 2)
            j += 2
          } else body += text[j++]
        }
        strings.push(body)
        out += `"#${strings.length - 1}"${newlines(body)}`
        i = j + 1
      } else if (c === "`") {
        i++
        scanTemplate()
      } else if (c === "/" && regexAllowed()) {
        let j = i + 1
        let inClass = false
        while (j < text.length && text[j] !== "\n" && (inClass || text[j] !== "/")) {
          if (text[j] === "\\") j++
          else if (text[j] === "[") inClass = true
          else if (text[j] === "]") inClass = false
          j++
        }
        j++
        while (j < text.length && /[a-z]/.test(text[j]!)) j++
        out += "/ /"
        i = j
      } else {
        if (inTemplate && c === "{") depth++
        if (inTemplate && c === "}") {
          if (depth === 0) {
            i++
            return
          }
          depth--
        }
        out += c
        i++
      }
    }
  }
  // Scans a template literal's text after its opening backtick; each `${…}` is code.
  const scanTemplate = (): void => {
    let body = ""
    const flush = () => {
      strings.push(body)
      out += `"#${strings.length - 1}"${newlines(body)}`
      body = ""
    }
    while (i < text.length) {
      const c = text[i]!
      if (c === "\\") {
        body += text.slice(i, i + 2)
        i += 2
      } else if (c === "`") {
        i++
        flush()
        return
      } else if (c === "$" && text[i + 1] === "{") {
        flush()
        i += 2
        out += " + ("
        scanCode(true)
        out += ") + "
      } else {
        body += c
        i++
      }
    }
    flush()
  }
  scanCode(false)
  return { code: out, strings }
}

const escapeDollar = (s: string) => s.replace(/[$]/g, "\\$")
const IDENT = "[A-Za-z_$][\\w$]*"

/**
 * The code with aliases resolved, plus member reads the scan must also see (`Date.now` for `const { now } = Date`,
 * `crypto.randomBytes` for a named import), each with the offset of the statement that made it.
 */
const normalise = (stripped: { readonly code: string; readonly strings: ReadonlyArray<string> }) => {
  let code = stripped.code.replace(/\b(?:globalThis|global|window)\s*\.\s*(?=[A-Za-z_$])/g, "")
  const extra: Array<{ readonly text: string; readonly at: number }> = []
  const aliases = new Map<string, string>()
  const moduleOf = (ref: string) => stripped.strings[Number(ref)] ?? ""
  // Imports: `import { A as b } from "effect"`, `import * as b from "effect/A"`, `import { x as y } from "node:crypto"`.
  for (const m of code.matchAll(/\bimport\s+(?!type\b)([\s\S]*?)\s*\bfrom\s*"#(\d+)"/g)) {
    const source = moduleOf(m[2]!)
    const clause = m[1]!
    const at = m.index
    const effectModule = /^effect\/(\w+)$/.exec(source)?.[1]
    const nodeModule = /^(?:node:)?(crypto|perf_hooks|timers(?:\/promises)?)$/.exec(source)?.[1]
    if (source !== "effect" && effectModule === undefined && nodeModule === undefined) continue
    if (nodeModule?.startsWith("timers")) extra.push({ text: "node:timers", at })
    const namespace = new RegExp(`^\\*\\s*as\\s+(${IDENT})`).exec(clause)?.[1] ?? new RegExp(`^(${IDENT})\\s*(?:,|$)`).exec(clause)?.[1]
    const owner = effectModule ?? (nodeModule === "crypto" ? "crypto" : undefined)
    if (namespace !== undefined && owner !== undefined) aliases.set(namespace, owner)
    for (const spec of (/\{([^}]*)\}/.exec(clause)?.[1] ?? "").split(",")) {
      const [name, local] = spec
        .replace(/^\s*type\s+/, "")
        .split(/\s+as\s+/)
        .map((s) => s.trim())
      if (!name) continue
      if (source === "effect" && TARGETS.includes(name)) aliases.set(local ?? name, name)
      else if (nodeModule === "perf_hooks" && name === "performance") aliases.set(local ?? name, "performance")
      else if (owner !== undefined) extra.push({ text: `${owner}.${name}`, at })
    }
  }
  // `const D = Date` (and chains: `const E = D`), resolved until nothing changes.
  for (let round = 0; round < 5; round++) {
    for (const m of code.matchAll(new RegExp(`\\b(?:const|let|var)\\s+(${IDENT})\\s*(?::[^=;\\n]+)?=\\s*(${TARGET})\\s*(?=[;,)}\\n]|$)`, "g"))) {
      if (m[1] !== m[2]) aliases.set(m[1]!, m[2]!)
    }
    const before = code
    for (const [alias, target] of aliases) code = code.replace(new RegExp(`(?<![\\w$.])${escapeDollar(alias)}(?![\\w$])`, "g"), target)
    if (code === before) break
  }
  // `const { now } = Date`, `const { now: n } = performance`.
  for (const m of code.matchAll(new RegExp(`\\{([^{}]*)\\}\\s*(?::[^=;\\n]+)?=\\s*(${TARGET})\\b(?!\\s*[.[(])`, "g"))) {
    for (const member of m[1]!.split(",")) {
      const key = member.split(/[:=]/)[0]!.trim()
      if (key) extra.push({ text: `${m[2]}.${key}`, at: m.index })
    }
  }
  return { code, extra }
}

/** Every forbidden use in one file's text, as `path:line: what` (allowlisted kinds left out). */
export const scan = (path: string, text: string): Array<string> => {
  const { code, extra } = normalise(strip(text))
  const lineOf = (offset: number) => code.slice(0, offset).split("\n").length
  const found = new Set<string>()
  for (const rule of RULES) {
    if (allowed(path, rule.kind)) continue
    for (const m of code.matchAll(rule.re)) found.add(`${path}:${lineOf(m.index)}: ${rule.what}`)
    for (const e of extra) if (new RegExp(rule.re.source).test(e.text)) found.add(`${path}:${lineOf(e.at)}: ${rule.what}`)
  }
  return [...found]
}

export const violations = (files: ReadonlyArray<{ path: string; text: string }>) => files.flatMap(({ path, text }) => scan(path, text))

export const walk = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? walk(path) : path.endsWith(".ts") ? [path] : []
  })

export const engineFiles = () => walk(join(ROOT, "engine")).map((path) => ({ path: relative(ROOT, path), text: readFileSync(path, "utf8") }))
