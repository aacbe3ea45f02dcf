/**
 * Bytes allocated per quote->trade pair in process: runs in-process-pair.ts under `--expose-gc --trace-gc-nvp` and
 * sums the collections' `allocated=` fields between its markers (a full collection at each), with what survived
 * scavenges (`new_space_survived=`) and what was promoted. Deterministic enough to judge a change on a busy machine,
 * where CPU figures are not (docs/performance.md).
 *   node scripts/bench/alloc-pair.ts [pairs, default 5000]
 */
import { spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"

const PAIRS = Number(process.argv[2] ?? 5000)
const script = fileURLToPath(new URL("./in-process-pair.ts", import.meta.url))
const run = spawnSync(process.execPath, ["--expose-gc", "--trace-gc-nvp", script, String(PAIRS)], {
  encoding: "utf8",
  maxBuffer: 1 << 30
})
if (run.status !== 0) throw new Error(`in-process-pair.ts failed: ${run.stderr}`)
const out = run.stdout
const inside = out.slice(out.indexOf("ALLOC-MEASURE-START"), out.indexOf("ALLOC-MEASURE-END"))
const tail = out.slice(out.indexOf("ALLOC-MEASURE-END"))
// The closing full collection's line is printed before the END marker; its allocation belongs to the loop.
const sum = (field: string) => [...inside.matchAll(new RegExp(`\\b${field}=(\\d+)`, "g"))].reduce((total, m) => total + Number(m[1]), 0)
const scavenges = [...inside.matchAll(/gc=s /g)].length
const perPair = (bytes: number) => `${(bytes / PAIRS / 1024).toFixed(1)} KB`
console.log(
  `${PAIRS} pairs: allocated ${perPair(sum("allocated"))}, survived scavenges ${perPair(sum("new_space_survived"))}, promoted ${perPair(sum("promoted"))} per pair; ${scavenges} scavenges`
)
console.log(tail.split("\n").find((line) => line.startsWith("quote ")) ?? "")
