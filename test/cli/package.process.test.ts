/**
 * The package as a partner installs it (issue 24, item 5; E-330): `npm pack` of this checkout (its prepack builds
 * dist/cli), installed with `--omit=dev` into an empty folder, and the installed `sokoni` run from there: `serve`
 * answers the API (on PostgreSQL too, with DATABASE_URL) and `conform` passes over the wire against it, `scenario
 * run` on a shipped scenario prints the trace hash the sources print, `webhooks check` grades a receiver, and nothing
 * of the sources nor of the dev dependencies was installed. The installed bin runs on this Node (process.execPath,
 * Node 24 under vitest), put first on PATH for npm and npx too, so a system Node 20 never runs it.
 *
 * Needs the npm registry: `npm install` fetches the dependencies (from npm's cache when it has them; CI's machine
 * reaches the registry). One pack and one install for the whole file, in beforeAll; the bounds are for failure only.
 * Spawns processes, so mutation testing skips it.
 */
import { spawn } from "node:child_process"
import { createHmac } from "node:crypto"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import { tmpdir } from "node:os"
import { delimiter, dirname, join, relative } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { servesTheConsole } from "../console/console-kit.ts"
import { adminUrl, freePort, send, withDatabase } from "../http/node-server-kit.ts"
import { onPostgres } from "../support/stores.ts"
import { ROOT, sokoni } from "../support/sokoni-cli.ts"

const ADMIN = "adm_package_test"
const SECRET = "whsec_package_test"
const SCENARIO = join("scenarios", "stream", "keep-alive-on-the-clock.yaml")
/** Long enough for a cold npm cache on a busy machine; a healthy pack and install take 5-15 s. */
const INSTALL_BOUND_MS = 300_000

interface Finished {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** npm, npx and the installed bin all find this Node first (the system's may be older than the engine needs). */
const env = { ...process.env, PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ""}` }

const run = (command: string, args: ReadonlyArray<string>, cwd: string) =>
  new Promise<Finished>((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString("utf8")))
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString("utf8")))
    child.on("error", reject)
    child.on("close", (code) => resolve({ code, stdout, stderr }))
  })

/** `npx --no sokoni ...` in the installing project: the installed bin, never one fetched from the registry. */
const npxSokoni = (args: ReadonlyArray<string>) => run("npx", ["--no", "sokoni", ...args], app)

let work: string
/** The empty folder the tarball was installed into. */
let app: string
/** The installed package, node_modules/sokoni. */
let installed: string

const filesUnder = (dir: string): ReadonlyArray<string> => readdirSync(dir, { recursive: true }).map(String)

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "sokoni-package-"))
  const packDir = join(work, "pack")
  mkdirSync(packDir)
  const packed = await run("npm", ["pack", "--pack-destination", packDir], ROOT)
  expect(packed.code, `npm pack failed:\n${packed.stdout}\n${packed.stderr}`).toBe(0)
  const tarball = readdirSync(packDir).find((f) => f.endsWith(".tgz"))
  expect(tarball).toBeDefined()
  app = join(work, "app")
  mkdirSync(app)
  writeFileSync(join(app, "package.json"), `${JSON.stringify({ name: "partner-app", private: true })}\n`)
  const install = await run("npm", ["install", "--omit=dev", "--no-audit", "--no-fund", join(packDir, tarball ?? "")], app)
  expect(install.code, `npm install failed:\n${install.stdout}\n${install.stderr}`).toBe(0)
  installed = join(app, "node_modules", "sokoni")
}, INSTALL_BOUND_MS)
afterAll(() => rmSync(work, { recursive: true, force: true }))

describe("the packed tarball, installed with --omit=dev into an empty folder", () => {
  it("holds the bundled CLI and the files it reads, no TypeScript source, and no dev dependency", () => {
    const files = filesUnder(installed)
    expect(files.filter((f) => f.endsWith(".ts"))).toEqual([])
    for (const needed of ["engine/cli/sokoni.js", "dist/cli/main.js", "spec/openapi.yaml", "spec/control.yaml", SCENARIO]) expect(files).toContain(needed)
    // Every scenario file of the checkout ships (conform runs each of them over the wire).
    const scenarios = (dir: string) => filesUnder(join(dir, "scenarios")).filter((f) => f.endsWith(".yaml"))
    expect(scenarios(installed).sort()).toEqual(scenarios(ROOT).sort())
    for (const dev of ["vitest", "rolldown", "typescript", "@biomejs/biome"]) expect(existsSync(join(app, "node_modules", dev)), dev).toBe(false)
    for (const runtime of ["effect", "yaml", "fast-check", "ajv"]) expect(existsSync(join(app, "node_modules", runtime)), runtime).toBe(true)
  })

  it("runs a shipped scenario (npx sokoni scenario run) and prints the trace hash the sources print", async () => {
    const [fromPackage, fromSources] = await Promise.all([
      npxSokoni(["scenario", "run", relative(app, join(installed, SCENARIO)), "--seed", "7"]),
      sokoni(["scenario", "run", join(ROOT, SCENARIO), "--seed", "7"])
    ])
    expect(fromPackage.stdout, fromPackage.stderr).toContain("9 passed, 0 failed")
    expect(fromPackage.code).toBe(0)
    const hashOf = (stdout: string) => /^trace hash ([0-9a-f]{64})$/m.exec(stdout)?.[1]
    expect(hashOf(fromPackage.stdout)).toMatch(/^[0-9a-f]{64}$/)
    expect(hashOf(fromPackage.stdout)).toBe(hashOf(fromSources.stdout))
  })

  it("serves the API (sokoni serve), passes conform's checks over the wire, and stops on SIGTERM with 0", async () => {
    const manual = ["--clock", "manual", "--start", "2026-11-23T08:00:00.000Z", "--desk", "manual"]
    await serveInstalled(manual, async (port) => {
      await servesTheApi(port)
      await servesTheConsole(port, ADMIN)
      const conform = await conformSubset(`http://127.0.0.1:${port}`)
      expect(conform.stdout, conform.stderr).toMatch(/^\d+ passed, 0 failed, 0 skipped$/m)
      expect(conform.code).toBe(0)
      for (const report of ["report.xml", "report.ctrf.json", "report.html"]) expect(existsSync(join(work, "report", report)), report).toBe(true)
    })
  }, 120_000)

  it.skipIf(adminUrl === undefined)("serves on the postgres store too", { ...onPostgres, timeout: 120_000 }, async () => {
    await withDatabase(adminUrl ?? "", (url) => serveInstalled(["--store", "postgres", "--database-url", url], servesTheApi))
  })

  it("grades a webhook receiver (npx sokoni webhooks check): a receiver that verifies signatures scores full marks", async () => {
    const receiver = await verifyingReceiver()
    try {
      const check = await npxSokoni(["webhooks", "check", "--url", receiver.url, "--secret", SECRET, "--seed", "5"])
      expect(check.stdout, check.stderr).toMatch(/^score (\d+)\/\1, every check passed$/m)
      expect(check.code).toBe(0)
    } finally {
      receiver.server.close()
    }
  })

  it("answers --help for each command", async () => {
    for (const command of [["serve"], ["scenario", "run"], ["conform"], ["webhooks", "check"]]) {
      const help = await npxSokoni([...command, "--help"])
      expect(help.code, help.stderr).toBe(0)
      expect(help.stdout).toContain("USAGE")
    }
  })
})

/**
 * The installed `sokoni serve` with these flags until `use` is done, then SIGTERM: it must have exited 0. Spawned
 * directly (the .bin entry, on this Node), not through npx, so that the signal reaches the engine rather than npm.
 */
const serveInstalled = async (flags: ReadonlyArray<string>, use: (port: number) => Promise<void>) => {
  const port = await freePort()
  const bin = join(app, "node_modules", ".bin", "sokoni")
  const args = [bin, "serve", "--port", String(port), "--seed", "1", "--admin-token", ADMIN, ...flags]
  const child = spawn(process.execPath, args, { cwd: app, env, stdio: ["ignore", "pipe", "pipe"] })
  let stdout = ""
  let stderr = ""
  child.stdout.on("data", (c: Buffer) => (stdout += c.toString("utf8")))
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString("utf8")))
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)))
  try {
    await expect.poll(() => stdout.includes("ready in") || child.exitCode !== null, { timeout: 60_000, interval: 50 }).toBe(true)
    expect(stdout, stderr).toContain("ready in")
    await use(port)
  } finally {
    child.kill("SIGTERM")
  }
  expect(await exited, stderr).toBe(0)
}

/** What any engine must answer: its status, a new partner over the control API, and that partner's stocks. */
const servesTheApi = async (port: number) => {
  expect((await send(port, "GET", "/api/v1/status", {})).status).toBe(200)
  const partner = { businessName: "Package Test", email: "package@sokoni.test", tier: "starter" }
  const headers = { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" }
  const created = await send(port, "POST", "/_sim/partners", headers, JSON.stringify(partner))
  expect(created.status, created.body).toBe(201)
  const { sandboxKey } = JSON.parse(created.body) as { sandboxKey: string }
  expect((await send(port, "GET", "/api/sandbox/v1/partner/stocks", { "x-api-key": sandboxKey })).status).toBe(200)
}

/**
 * conform against the installed serve, on a selection that loads every lazy part of the bundle: the contract check
 * of every operation (the validator, spec/*.yaml), two scenarios over the wire (scenarios/), a history judged at the
 * end and the three reports written. The whole run is test/conform/conform.process.test.ts's, from the sources.
 */
const conformSubset = (base: string) =>
  npxSokoni([
    "conform",
    "--base",
    base,
    "--admin-token",
    ADMIN,
    "--seed",
    "4",
    "--only",
    "answers-within-contract,scenario: stream/keep-alive-on-the-clock.yaml,scenario: webhook-retries/retry-1-then-delivered.yaml",
    "--history",
    join(work, "history.jsonl"),
    "--report",
    join(work, "report")
  ])

/** A receiver as a partner should write one: HMAC-SHA256 of the raw bytes in x-service-signature, else 401. */
const verifyingReceiver = async (): Promise<{ readonly server: Server; readonly url: string }> => {
  const server = createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (c: Buffer) => chunks.push(c))
    request.on("end", () => {
      const expected = createHmac("sha256", SECRET).update(Buffer.concat(chunks)).digest("hex")
      response.writeHead(request.headers["x-service-signature"] === expected ? 200 : 401).end()
    })
  })
  const port = await freePort()
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve))
  return { server, url: `http://127.0.0.1:${port}/webhooks/sokoni` }
}
