/**
 * The `sokoni serve` process: SIGTERM exits 0 within 10 s, a taken port and a bad database URL exit 1 with one line
 * and no stack, the seed is printed first, and `--webhook-signature-header` reaches the deliveries (a bad name exits 2). These spawn processes, so mutation testing skips this file (the
 * transport itself is tested in-process in node-server.test.ts).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { createHmac } from "node:crypto"
import { createServer as createHttpServer, type IncomingHttpHeaders } from "node:http"
import { createServer, type Server } from "node:net"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { accepts, adminUrl, connectionsAfterClose, freePort, send, withDatabase } from "./node-server-kit.ts"
import { onPostgres } from "../support/stores.ts"

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
      await serve.ready(45_000)
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

  it("--webhook-signature-header sends the same HMAC under more names; a bad name exits 2 with one line, nothing started", async () => {
    const received: Array<{ headers: IncomingHttpHeaders; body: string }> = []
    const receiver = createHttpServer((req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (c: Buffer) => chunks.push(c))
      req.on("end", () => {
        received.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8") })
        res.writeHead(204).end()
      })
    })
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
    const receiverAddress = receiver.address()
    const hook = `http://127.0.0.1:${typeof receiverAddress === "object" && receiverAddress !== null ? receiverAddress.port : 0}/hook`
    const port = await freePort()
    const serve = spawnServe([
      "--port",
      String(port),
      "--clock",
      "manual",
      "--seed",
      "1",
      "--admin-token",
      "t",
      "--webhook-signature-header",
      "X-MyStocks-Signature",
      "--webhook-signature-header",
      "x-service-signature"
    ])
    try {
      await serve.ready(45_000)
      const json = { "content-type": "application/json" }
      const partner = JSON.parse(
        (await send(port, "POST", "/_sim/partners", { ...json, authorization: "Bearer t" }, JSON.stringify({ businessName: "Hooks", email: "h@k.test" }))).body
      )
      const secret = "whsec_0123456789abcdef"
      const key = { ...json, "x-api-key": partner.sandboxKey }
      const created = await send(
        port,
        "POST",
        "/api/sandbox/v1/partner/webhooks",
        { ...key, "idempotency-key": "hook-create-1" },
        JSON.stringify({ url: hook, events: ["wallet.credited"], secret })
      )
      expect(created.status).toBe(201)
      const id = JSON.parse(created.body).id
      const tested = await send(port, "POST", `/api/sandbox/v1/partner/webhooks/${id}/test`, { ...key, "idempotency-key": "hook-test-01" })
      expect(tested.status).toBe(200)
      expect(received).toHaveLength(1)
      const [delivery] = received
      const expected = createHmac("sha256", secret)
        .update(delivery?.body ?? "")
        .digest("hex")
      expect(delivery?.headers["x-service-signature"]).toBe(expected)
      expect(delivery?.headers["x-mystocks-signature"]).toBe(expected)
      expect(JSON.parse(delivery?.body ?? "{}")).toMatchObject({ event: "test.event", isSandbox: true })
    } finally {
      const done = await stopsOnSigterm(serve.child, serve.finished)
      expect(done.stdout).toContain("webhook signatures also sent as x-mystocks-signature (besides x-service-signature)")
      await new Promise((resolve) => receiver.close(resolve))
    }

    const bad = await freePort()
    for (const name of ["x signature", "Content-Type"]) {
      const done = await withDeadline(spawnServe(["--port", String(bad), "--webhook-signature-header", name]).finished, 20_000, "serve with a bad header name")
      expect(done.code).toBe(2)
      oneLineNoStack(`${done.stdout}\n${done.stderr}`, "sokoni: --webhook-signature-header")
      expect(await accepts(bad)).toBe(false)
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

describe.skipIf(adminUrl === undefined)(
  adminUrl === undefined ? "sokoni serve on postgres (skipped: set DATABASE_URL)" : "sokoni serve on postgres",
  onPostgres,
  () => {
    const admin = adminUrl ?? ""

    it("serve --store postgres exits 0 within 10 s of SIGTERM", async () => {
      await withDatabase(admin, async (url) => {
        const port = await freePort()
        const serve = spawnServe(["--port", String(port), "--clock", "manual", "--store", "postgres", "--database-url", url])
        try {
          await serve.ready(45_000)
          expect((await send(port, "GET", "/api/v1/status", {})).status).toBe(200)
        } finally {
          await stopsOnSigterm(serve.child, serve.finished)
        }
        expect(await connectionsAfterClose(admin, url)).toBe(0)
      })
    })
  }
)
