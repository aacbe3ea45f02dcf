/**
 * `npm start` as a newcomer runs it, then stops it the way a process manager or a terminal's close does: SIGTERM to
 * npm. The engine must go with it (the script `exec`s node, so no shell stands between npm and the engine to swallow
 * the signal) and its port must close; before, npm exited and the engine kept listening. The demo partner's id is
 * printed with its keys (the README's production example needs it). Waits are on output and the port, with generous
 * failure bounds only.
 */
import { spawn } from "node:child_process"
import { describe, expect, it } from "vitest"
import { accepts, freePort } from "../http/node-server-kit.ts"
import { ROOT, within } from "../support/sokoni-cli.ts"

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

const portClosed = async (port: number) => {
  while (await accepts(port)) await pause(100)
}

describe("npm start", () => {
  it("prints the demo partner's id and keys, and SIGTERM to npm stops the engine and closes its port", async () => {
    const port = await freePort()
    const npm = spawn("npm", ["start", "--", "--port", String(port)], { cwd: ROOT, env: { ...process.env }, stdio: ["ignore", "pipe", "pipe"] })
    let out = ""
    const ready = new Promise<void>((resolve, reject) => {
      npm.stdout.on("data", (c: Buffer) => {
        out += c.toString("utf8")
        if (out.includes("ready in")) resolve()
      })
      npm.on("exit", () => reject(new Error(`npm start ended before the engine was ready:\n${out}`)))
    })
    const exited = new Promise<void>((resolve) => npm.on("exit", () => resolve()))
    await within(120_000, "the engine ready", ready)
    expect(out).toMatch(/demo partner: ptn_\w+\n\s+sandbox key sk_sandbox_\w+\n\s+live key\s+pk_live_\w+/)
    expect(await accepts(port)).toBe(true)
    npm.kill("SIGTERM")
    await within(30_000, "npm exiting", exited)
    // The engine's own graceful stop may take a moment after npm is gone: wait for the port to close.
    await within(30_000, "the port closing", portClosed(port))
  }, 240_000)
})
