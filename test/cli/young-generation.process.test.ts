/**
 * serve's cap on V8's young generation (E-358): in a process that keeps a share of what it allocates, as an engine
 * under a write flood does, the young generation stays at the cap instead of growing to V8's 64 MB semi-spaces. The
 * run is driven by allocation, not time: it waits only for the child's exit, with a failure bound.
 */
import { spawn } from "node:child_process"
import { describe, expect, it } from "vitest"
import { ROOT, within } from "../support/sokoni-cli.ts"

const MB = 1024 * 1024

/** The largest young generation (MB) seen in a child that allocates 3 million objects, keeping a third of them a while. */
const youngPeakMb = (capMb: number): Promise<number> => {
  const code = `
    import { getHeapSpaceStatistics } from "node:v8"
    import { capYoungGeneration } from "./engine/cli/young-generation.js"
    capYoungGeneration(${capMb})
    const young = () => getHeapSpaceStatistics().find((s) => s.space_name === "new_space").space_size
    const kept = []
    let peak = 0
    for (let i = 0; i < 3e6; i++) {
      const o = { a: i, b: "x" + i, c: [i, i + 1] }
      if (i % 3 === 0) kept.push(o)
      if (kept.length > 200000) kept.splice(0, 100000)
      // A macrotask now and then, as a server's requests are: the cap is kept after each young collection's notice.
      if (i % 1000 === 0) { peak = Math.max(peak, young()); await new Promise((r) => setImmediate(r)) }
    }
    console.log(peak)`
  const child = spawn(process.execPath, ["--input-type=module", "-e", code], { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] })
  let out = ""
  child.stdout.on("data", (c: Buffer) => {
    out += c.toString()
  })
  return within(
    120_000,
    "the allocating child",
    new Promise<number>((resolve, reject) =>
      child.on("exit", (status) => (status === 0 ? resolve(Number(out.trim()) / MB) : reject(new Error(`child exited ${status}: ${out}`))))
    )
  )
}

describe("the young generation's cap in a process", () => {
  it("keeps a process's young generation at the cap where V8 alone grows it far past it", async () => {
    const [capped, uncapped] = await Promise.all([youngPeakMb(8), youngPeakMb(0)])
    expect(capped).toBeLessThanOrEqual(8 * 1.5)
    expect(uncapped).toBeGreaterThan(4 * 8)
  })
})
