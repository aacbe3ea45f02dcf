/**
 * The `sokoni serve` process: SIGTERM exits 0 within 10 s, a taken port and a bad database URL exit 1 with one line
 * and no stack, and the seed is printed first. These spawn processes, so mutation testing skips this file (the
 * transport itself is tested in-process in node-server.test.ts).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { createServer, type Server } from "node:net"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { accepts, adminUrl, connectionsTo, freePort, send, withDatabase } from "./node-server-kit.ts"

const ROOT = join(import.meta.dirname, "..", "..")
const BIN = join(ROOT, "engine", "cli", "bin.ts")

interface Finished {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

const spawnServe = (args: ReadonlyArray<string>) => {
  const child = spawn(process.execPath, [BIN, "serve", ...args], { cwd: ROOT, env: { ...process.env }, stdio: ["ignore", "pipe", "pipe"] })
  let stdout = ""
  let stderr = ""
  child.stdout?.on("data", (c: Buffer) => {
    stdout += c.toString("utf8")
  })
  child.stderr?.on("data", (c: Buffer) => {
    stderr += c.toString("utf8")
  })
  const finished = new Promise<Finished>((resolve) => child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr })))
  const ready = async (timeoutMs: number) => {
    const until = Date.now() + timeoutMs
    while (!stdout.includes("ready in")) {
      if (child.exitCode !== null || Date.now() > until) throw new Error(`serve did not start:\n${stdout}\n${stderr}`)
      await new Promise((r) => setTimeout(r, 25))
    }
  }
  return { child, finished, ready }
}

const withDeadline = <A>(promise: Promise<A>, ms: number, what: string) =>
  Promise.race([promise, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what} took over ${ms} ms`)), ms).unref())])

const stopsOnSigterm = async (child: ChildProcess, finished: Promise<Finished>) => {
  const started = Date.now()
  child.kill("SIGTERM")
  const done = await withDeadline(finished, 10_000, "exit after SIGTERM")
  expect(done.signal).toBeNull()
  expect(done.code).toBe(0)
  expect(Date.now() - started).toBeLessThan(10_000)
  return done
}

const oneLineNoStack = (output: string, prefix: string) => {
  const lines = output.split("\n").filter((l) => l !== "")
  expect(lines.filter((l) => l.startsWith(prefix))).toHaveLength(1)
  expect(lines.filter((l) => l.startsWith("sokoni:"))).toHaveLength(1)
  expect(lines.some((l) => l.startsWith("    at "))).toBe(false)
}

describe("sokoni serve (child process)", () => {
  it("exits 0 within 10 s of SIGTERM (memory store), after serving", async () => {
    const port = await freePort()
    const serve = spawnServe(["--port", String(port), "--clock", "manual", "--seed", "1"])
    try {
      await serve.ready(20_000)
      expect((await send(port, "GET", "/api/v1/status", {})).status).toBe(200)
    } finally {
      const done = await stopsOnSigterm(serve.child, serve.finished)
      expect(done.stdout.split("\n")[0]).toBe("seed 1")
    }
  })

  it("prints one line starting `sokoni: port` and exits 1 when the port is taken", async () => {
    const blocker: Server = createServer()
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve))
    const address = blocker.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    try {
      const done = await withDeadline(spawnServe(["--port", String(port)]).finished, 20_000, "serve on a taken port")
      expect(done.code).toBe(1)
      oneLineNoStack(`${done.stdout}\n${done.stderr}`, `sokoni: port ${port} is already in use`)
    } finally {
      await new Promise((resolve) => blocker.close(resolve))
    }
  })

  it("prints one line starting `sokoni: could not start` and exits 1 on a database it cannot reach", async () => {
    const port = await freePort()
    for (const url of ["postgres://nobody@127.0.0.1:1/nope", "not a url"]) {
      const done = await withDeadline(
        spawnServe(["--port", String(port), "--store", "postgres", "--database-url", url]).finished,
        20_000,
        "serve on a bad database URL"
      )
      expect(done.code).toBe(1)
      oneLineNoStack(`${done.stdout}\n${done.stderr}`, "sokoni: could not start")
      // the port was never opened
      expect(await accepts(port)).toBe(false)
    }
  })
})

describe.skipIf(adminUrl === undefined)(adminUrl === undefined ? "sokoni serve on postgres (skipped: set DATABASE_URL)" : "sokoni serve on postgres", () => {
  const admin = adminUrl ?? ""

  it("serve --store postgres exits 0 within 10 s of SIGTERM", async () => {
    await withDatabase(admin, async (url) => {
      const port = await freePort()
      const serve = spawnServe(["--port", String(port), "--clock", "manual", "--store", "postgres", "--database-url", url])
      try {
        await serve.ready(30_000)
        expect((await send(port, "GET", "/api/v1/status", {})).status).toBe(200)
      } finally {
        await stopsOnSigterm(serve.child, serve.finished)
      }
      expect(await connectionsTo(admin, url)).toBe(0)
    })
  })
})
