/**
 * `sokoni conform` against the contract's mock (Prism on spec/openapi.yaml, what `npm run mock` runs; a child process
 * on a free loopback port): conform finds the mock's flat layout by itself, finds that it keeps no state (a sub-account
 * it just created is not there) and says so once at the top, and skips the behaviour checks (stateful, scenarios)
 * rather than report each as the target's fault (issue 23).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { runConform } from "../../engine/conform/conform.ts"
import { statefulChecks } from "../../engine/conform/stateful-checks.ts"
import { freePort } from "../http/node-server-kit.ts"

const root = join(import.meta.dirname, "..", "..")
const prismEntry = join(root, "node_modules", "@stoplight", "prism-cli", "dist", "index.js")

let prism: ChildProcess | undefined
let base = ""
let output = ""

beforeAll(async () => {
  const port = await freePort()
  base = `http://127.0.0.1:${port}`
  prism = spawn(process.execPath, [prismEntry, "mock", "--host", "127.0.0.1", "--port", String(port), join(root, "spec", "openapi.yaml")], {
    cwd: root,
    stdio: ["ignore", "pipe", "pipe"]
  })
  prism.stdout?.on("data", (c) => {
    output += String(c)
  })
  prism.stderr?.on("data", (c) => {
    output += String(c)
  })
  // Prism's start-up is real time by nature: poll until it answers (a failure bound, not a wait on behaviour).
  const deadline = performance.now() + 40_000
  while (performance.now() < deadline) {
    if (prism.exitCode !== null) throw new Error(`prism exited early:\n${output}`)
    const up = await fetch(`${base}/status`).then(
      (r) => r.status === 200,
      () => false
    )
    if (up) return
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
  throw new Error(`prism did not start:\n${output}`)
}, 60_000)

afterAll(async () => {
  if (prism === undefined || prism.exitCode !== null) return
  const exited = new Promise((resolve) => prism?.once("exit", resolve))
  prism.kill("SIGTERM")
  await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5_000))])
  if (prism.exitCode === null) prism.kill("SIGKILL")
})

describe("sokoni conform against Prism (npm run mock)", () => {
  it("says once at the top that the mock keeps no state, and skips its behaviour checks rather than failing them", async () => {
    const ids = statefulChecks().map((c) => c.id)
    let layout = ""
    const report = await runConform({
      base,
      sandboxKey: "sk_sandbox_0123456789abcdef",
      liveKey: "pk_live_0123456789abcdef",
      seed: 3,
      only: [...ids, "scenario"],
      now: () => Date.parse("2026-11-23T08:00:00.000Z"),
      sleep: async (ms) => {
        throw new Error(`no real wait expected against the mock (asked ${ms} ms)`)
      },
      bound: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
      onStart: (info) => {
        layout = info.layout
      }
    })
    expect(layout).toBe("flat")
    expect(report.notes?.[0]).toMatch(
      /^the target keeps no state: it answered 200 for a sub-account never made \(GET \/users\/usr_conform_never_made_3_\w+ gave \S+\); its behaviour checks \(stateful, scenarios\) are skipped, its contract checks stand$/
    )
    expect(report.checks.filter((c) => c.status !== "skipped").map((c) => c.name)).toEqual([])
    expect(report.checks.filter((c) => c.suite.startsWith("stateful")).map((c) => c.name.split(":")[0])).toEqual(ids)
    for (const check of report.checks) expect(check.message).toBe("the target keeps no state (said at the top of the report)")
  }, 60_000)
})
