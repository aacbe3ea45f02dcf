/**
 * The `sokoni webhooks check` process against the correct example receiver (started in this process on port 0):
 * the seed is printed first, full marks exit 0 and the three reports are written; a missing secret or an unknown
 * event exits 2 with one line. Spawns processes, so mutation testing skips this file (the grading is tested
 * in-process in webhook-receiver-check.test.ts).
 */
import { mkdtemp, readFile, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Receiver, startCorrectReceiver } from "../../contracts/examples/receiver-correct.ts"
import { sokoni as run } from "../support/sokoni-cli.ts"

const SECRET = "whsec_process_test"

/** `sokoni` without the secret a developer's shell may hold: each test says where the secret comes from. */
const sokoni = (args: ReadonlyArray<string>, env: Record<string, string> = {}) => run(args, { SOKONI_WEBHOOK_SECRET: undefined, ...env })

describe("sokoni webhooks check (process)", () => {
  let receiver: Receiver
  let dir: string
  beforeAll(async () => {
    receiver = await startCorrectReceiver(SECRET)
    dir = await mkdtemp(join(tmpdir(), "sokoni-webhooks-check-"))
  })
  afterAll(async () => {
    await receiver.close()
    await rm(dir, { recursive: true, force: true })
  })

  it("prints the seed first, grades the receiver 12/12, writes the reports and exits 0", async () => {
    const out = join(dir, "reports")
    const run = await sokoni(["webhooks", "check", "--url", receiver.url, "--seed", "11", "--report", out], { SOKONI_WEBHOOK_SECRET: SECRET })
    expect(run.stdout.split("\n")[0]).toBe("seed 11")
    expect(run.stdout).toContain("score 12/12, every check passed")
    expect(run.code).toBe(0)
    const junit = await readFile(join(out, "report.xml"), "utf8")
    expect(junit.match(/<testcase /g)).toHaveLength(8)
    expect(JSON.parse(await readFile(join(out, "report.ctrf.json"), "utf8")).results.summary).toMatchObject({ tests: 8, passed: 8, failed: 0 })
    const html = await readFile(join(out, "report.html"), "utf8")
    expect(html).toContain("score 12/12")
    expect(html).not.toContain(SECRET)
  })

  it("exits 2 with one line when the secret is missing or an event is unknown", async () => {
    const noSecret = await sokoni(["webhooks", "check", "--url", receiver.url, "--seed", "1"])
    expect(noSecret.code).toBe(2)
    expect(noSecret.stderr.trim()).toBe("sokoni: give the webhook secret: --secret S, or SOKONI_WEBHOOK_SECRET")
    const unknown = await sokoni(["webhooks", "check", "--url", receiver.url, "--secret", SECRET, "--events", "order.filled,order.exploded"])
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toMatch(/^sokoni: --events: order\.exploded not sendable/)
  })
})
