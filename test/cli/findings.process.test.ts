/**
 * The findings as a person meets them (E-360, E-366): `sokoni findings` prints what a running engine noticed, and
 * `serve` prints the same summary when SIGTERM stops it, after the requests in flight were answered. Waits are on
 * output and exits, with generous failure bounds only.
 */
import { spawn } from "node:child_process"
import { describe, expect, it } from "vitest"
import { targetDialect } from "../../engine/cli/findings.ts"
import { startServer } from "../../engine/http/node-server.ts"
import { freePort } from "../http/node-server-kit.ts"
import { BIN, ROOT, sokoni, within } from "../support/sokoni-cli.ts"

const TOKEN = "findings-admin"
const REFUSED = "POST /users without Idempotency-Key: refused, the spec requires it (400 MISSING_IDEMPOTENCY_KEY)"

describe("sokoni findings and serve's summary when it stops", () => {
  it("prints the engine's findings on demand and again when serve is stopped", async () => {
    const port = await freePort()
    const base = `http://127.0.0.1:${port}`
    const serve = spawn(process.execPath, [BIN, "serve", "--port", String(port), "--admin-token", TOKEN, "--seed", "3"], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"]
    })
    let out = ""
    const ready = new Promise<void>((resolve, reject) => {
      serve.stdout.on("data", (c: Buffer) => {
        out += c.toString("utf8")
        if (out.includes("ready in")) resolve()
      })
      serve.on("exit", () => reject(new Error(`serve ended before it was ready:\n${out}`)))
    })
    const exited = new Promise<number | null>((resolve) => serve.on("exit", (code) => resolve(code)))
    await within(120_000, "serve ready", ready)
    expect(out).toContain("dialect spec")

    const admin = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" }
    const partner = await fetch(`${base}/_sim/partners`, {
      method: "POST",
      headers: admin,
      body: JSON.stringify({ businessName: "Findings Partner", email: "p@partner.test", tier: "starter" })
    })
    expect(partner.status).toBe(201)
    const { partnerId, sandboxKey } = (await partner.json()) as { partnerId: string; sandboxKey: string }
    const body = JSON.stringify({ externalId: "x", displayName: "Xavier", email: "x@partner.test" })
    const created = await fetch(`${base}/api/sandbox/v1/partner/users`, {
      method: "POST",
      headers: { "x-api-key": sandboxKey, "content-type": "application/json" },
      body
    })
    expect(created.status).toBe(400)

    const printed = await sokoni(["findings", "--base", base, "--admin-token", TOKEN])
    expect([printed.code, printed.stderr]).toEqual([0, ""])
    expect(printed.stdout).toContain("findings (dialect spec): 1,")
    expect(printed.stdout).toContain(`${partnerId}  createSubAccount  x1  dialect.missing-idempotency-key`)
    expect(printed.stdout).toContain(REFUSED)

    serve.kill("SIGTERM")
    expect(await within(30_000, "serve exiting", exited)).toBe(0)
    const summary = out.slice(out.indexOf("ready in"))
    expect(summary).toContain("findings (dialect spec): 1,")
    expect(summary).toContain(REFUSED)
  }, 240_000)

  it("asks for the admin token rather than guessing it", async () => {
    const run = await sokoni(["findings", "--base", "http://127.0.0.1:9"], { SOKONI_ADMIN_TOKEN: undefined })
    expect([run.code, run.stderr.trim()]).toEqual([2, "sokoni: give the engine's admin token: --admin-token T, or SOKONI_ADMIN_TOKEN"])
  }, 60_000)

  it("tells conform which dialect a target serves, and nothing without the target's admin token", async () => {
    const config = { store: "memory", clock: "manual", seed: 1, desk: "manual", adminToken: TOKEN, dialect: "public-service" } as const
    const server = await startServer(config, 0)
    try {
      expect(await targetDialect(server.url, TOKEN)).toBe("public-service")
      expect(await targetDialect(server.url, "not-the-token")).toBeUndefined()
    } finally {
      await server.stop({ idleLingerMs: 0 })
    }
  })
})
