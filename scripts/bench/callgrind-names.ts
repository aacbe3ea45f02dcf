/**
 * Names the JIT code in a callgrind dump: callgrind lists V8's generated code by address (`0x...`), and node's
 * `--perf-basic-prof` writes every code object's range and name to /tmp/perf-<pid>.map. Rewrites each such function
 * name to the JS function whose range holds it (the tier mark V8 writes: `*` TurboFan, `+` Maglev, `^` Sparkplug,
 * `~` interpreted), so `callgrind_annotate --inclusive=yes` attributes instructions to the engine's functions.
 *   node scripts/bench/callgrind-names.ts <callgrind dump> </tmp/perf-PID.map> <output>
 * A range written later (code made again after a deoptimisation) wins over an older one at the same address.
 */
import { readFileSync, writeFileSync } from "node:fs"

const [dump, map, output] = process.argv.slice(2) as [string, string, string]
const ranges = readFileSync(map, "utf8")
  .split("\n")
  .map((line) => /^([0-9a-f]+) ([0-9a-f]+) (.*)$/.exec(line))
  .flatMap((m) => (m === null ? [] : [{ start: Number.parseInt(m[1]!, 16), size: Number.parseInt(m[2]!, 16), name: m[3]! }]))
// Stable sort by start: among equal starts the later line stays later, so the search below meets it first.
ranges.sort((a, b) => a.start - b.start)

/** The last range starting at or before `address` that holds it, looking back over overlapping older ranges. */
const nameAt = (address: number): string | undefined => {
  let lo = 0
  let hi = ranges.length - 1
  while (lo <= hi) {
    const mid = (lo + hi) >> 1
    if (ranges[mid]!.start <= address) lo = mid + 1
    else hi = mid - 1
  }
  for (let i = hi; i >= 0 && address - ranges[i]!.start < 1 << 20; i--) {
    const r = ranges[i]!
    if (address < r.start + r.size) return r.name.replace(/file:\/\/\S*?\/(engine|scripts|node_modules)\//, "$1/")
  }
  return undefined
}

let named = 0
const text = readFileSync(dump, "utf8").replace(/^(c?fn)=\((\d+)\) 0x([0-9a-f]+)$/gm, (line, kind: string, id: string, hex: string) => {
  const name = nameAt(Number.parseInt(hex, 16))
  if (name === undefined) return line
  named++
  return `${kind}=(${id}) ${name} [${hex}]`
})
writeFileSync(output, text)
console.log(`${named} code addresses named`)
