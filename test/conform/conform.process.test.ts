/**
 * The `sokoni conform` process against a `sokoni serve` process (manual clock, manual desk, control API on): the seed
 * is printed first, the three reports are written (the HTML with its coverage and the scenarios' timelines), nothing
 * fails and the exit status is 0; against a serve with a planted defect the check that names it fails with a curl
 * reproducer and the replay command, and the exit status is 1. Spawns processes (skipped by mutation testing).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtemp, readFile, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join, relative } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { scenarioFiles } from "../../engine/conform/scenario-checks.ts"
import { freePort } from "../http/node-server-kit.ts"
import { BIN, ROOT, sokoni } from "../support/sokoni-cli.ts"

const SCENARIOS = join(ROOT, "scenarios")
const TOKEN = "conform-process-admin"

/** `sokoni serve` on a free port, resolved once it prints "ready". */
const serve = async (extra: ReadonlyArray<string> = []) => {
  const port = await freePort()
  const child = spawn(
    process.execPath,
    // A fixed seed: serve draws a fresh one otherwise, and the offers' windows (placed around the start from the seed)
    // decide whether the subscriptions suite, run a week or two past its start, finds an open treasury bill.
    [
      BIN,
      "serve",
      "--port",
      String(port),
      "--seed",
      "1",
      "--clock",
      "manual",
      "--start",
      "2026-11-23T08:00:00.000Z",
      "--desk",
      "manual",
      "--admin-token",
      TOKEN,
      ...extra
    ],
    { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] }
  )
  let out = ""
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on("data", (c: Buffer) => {
      out += c.toString("utf8")
      if (out.includes("ready in")) resolve()
    })
    child.on("exit", (code) => reject(new Error(`serve exited ${code}: ${out}`)))
  })
  return { child, out, base: `http://127.0.0.1:${port}` }
}

const stop = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null) return resolve()
    child.once("exit", () => resolve())
    child.kill("SIGTERM")
  })

describe("sokoni conform (process)", () => {
  let dir: string
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "sokoni-conform-"))
  })
  afterAll(() => rm(dir, { recursive: true, force: true }))

  it("prints the seed first, passes against our engine with nothing skipped, writes the three reports and exits 0", async () => {
    const engine = await serve()
    try {
      const out = join(dir, "green")
      const run = await sokoni(["conform", "--base", engine.base, "--admin-token", TOKEN, "--seed", "4", "--report", out, "--progress"])
      expect(run.stdout.split("\n")[0]).toBe("seed 4")
      // With the control API nothing is skipped: receivers scripted through it, worlds of their own by reset.
      expect(run.stdout).toMatch(/\n\d+ passed, 0 failed, 0 skipped\n/)
      expect(run.code).toBe(0)
      // The progress line: checks done, failures so far, time left.
      expect(run.stderr).toMatch(/^\d+\/\d+ checks, 0 failed, 0 skipped, ~\d+ s left/m)
      const ctrf = JSON.parse(await readFile(join(out, "report.ctrf.json"), "utf8"))
      expect(ctrf.results.summary.failed).toBe(0)
      expect(ctrf.results.summary.skipped).toBe(0)
      expect(ctrf.results.summary.passed).toBeGreaterThan(350)
      const tests = ctrf.results.tests as Array<{ name: string; status: string; message?: string }>
      // Scenarios run over the wire on the one engine (moved by whole weeks past their start).
      expect(tests.find((t) => t.name === "scenario: settlement/market-buy-settles.yaml")?.status).toBe("passed")
      expect(tests.find((t) => t.name === "scenario: subscriptions/sub-account-bill-allotted.yaml")?.status).toBe("passed")
      // Scripted receivers over the control API, and the scenarios that need a world of their own after a reset.
      expect(tests.find((t) => t.name === "scenario: webhook-retries/all-six-fail.yaml")?.status).toBe("passed")
      const fresh = tests.filter((t) => t.message?.endsWith("(on a fresh world: POST /_sim/reset)"))
      // Exactly the scenario files that say they need one (`ownTarget:` or `dated:`), read here from the files.
      const needFresh = []
      for (const file of scenarioFiles())
        if (/^(ownTarget|dated):/m.test(await readFile(file, "utf8"))) needFresh.push(`scenario: ${relative(SCENARIOS, file)}`)
      expect(needFresh.length).toBeGreaterThanOrEqual(5)
      expect(fresh.map((t) => t.name).sort()).toEqual(needFresh.sort())
      // They ran last: a reset ends every other check's state.
      expect(
        tests
          .slice(-fresh.length)
          .map((t) => t.name)
          .sort()
      ).toEqual(fresh.map((t) => t.name).sort())
      const junit = await readFile(join(out, "report.xml"), "utf8")
      expect(junit).toContain('name="rate-limit-oracle: the first 429 is exactly request limit + 1')
      const html = await readFile(join(out, "report.html"), "utf8")
      expect(html).toContain("<h2>Coverage</h2>")
      expect(html).toMatch(/\d+ of 107 operations checked/)
      expect(html).toContain("settlement/market-buy-settles.yaml")
      expect(html).not.toContain(TOKEN)
    } finally {
      await stop(engine.child)
    }
  }, 300_000)

  it("against a planted defect, fails the check that names it with a reproducer and the replay, and exits 1", async () => {
    const engine = await serve(["--plant-defect", "quote-ttl"])
    try {
      expect(engine.out).toContain("PLANTED DEFECT quote-ttl (test only)")
      const run = await sokoni(["conform", "--base", engine.base, "--admin-token", TOKEN, "--seed", "5", "--only", "quote-ttl,quote-single-use"])
      expect(run.stdout.split("\n")[0]).toBe("seed 5")
      expect(run.stdout).toContain("  FAIL quote-ttl: a trade on a quote past its expiresAt is refused with 409 STALE_QUOTE")
      expect(run.stdout).toMatch(/reproduce: curl -sS -i -X POST '.*\/api\/sandbox\/v1\/partner\/trade'/)
      expect(run.stdout).toContain(`replay:    npx sokoni conform --base '${engine.base}' --admin-token "$SOKONI_ADMIN_TOKEN" --seed 5 --only quote-ttl`)
      expect(run.stdout).toContain("1 passed, 1 failed, 0 skipped")
      expect(run.code).toBe(1)
    } finally {
      await stop(engine.child)
    }
  }, 60_000)

  it("exits once its report is written, whatever a scenario left open (an enterprise partner's third stream, no control API)", async () => {
    const engine = await serve()
    try {
      // A partner the scenario cannot choose: enterprise, so the stream a starter's cap would refuse is admitted.
      const made = await fetch(`${engine.base}/_sim/partners`, {
        method: "POST",
        headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify({ businessName: "Exit Co", email: "exit@conform.test", tier: "enterprise" })
      })
      const keys = (await made.json()) as { sandboxKey: string; liveKey: string }
      const out = join(dir, "exit")
      const args = ["conform", "--base", engine.base, "--sandbox-key", keys.sandboxKey, "--live-key", keys.liveKey, "--seed", "6", "--report", out]
      // The process closing is the proof; the test's timeout is the failure bound.
      const run = await sokoni([...args, "--only", "scenario: stream/production-cap.yaml"])
      expect(run.stdout).toMatch(/^reports: .*report\.html$/m)
      expect(run.code === 0 || run.code === 1).toBe(true)
    } finally {
      await stop(engine.child)
    }
  }, 60_000)

  it("refuses an unknown defect name and a run with no credentials (exit 2, one line)", async () => {
    const bad = await sokoni(["serve", "--plant-defect", "nope", "--port", "1"])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toMatch(/^sokoni: --plant-defect: nope unknown; choose from fee-rounding, quote-ttl, rate-limit-plus-one, webhook-reserialised/)
    const none = await sokoni(["conform", "--base", "http://127.0.0.1:1", "--seed", "1"])
    expect(none.code).toBe(2)
    expect(none.stderr.trim()).toBe("sokoni: give --admin-token (our engine) or --sandbox-key/--live-key (any target)")
  })
})
