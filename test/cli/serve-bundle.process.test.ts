/**
 * The bundled `serve` (scripts/build-serve.ts, engine/cli/bundle.js) as a user meets it: built into a temporary
 * directory, `sokoni serve` runs it (and none of the engine's sources) and serves on both stores; a bundle whose
 * inputs changed is not run (the sources are, and serve still works); the build refuses a bundle that would read
 * files beside itself or import a package at run time. Spawns processes, so mutation testing skips it.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { BUNDLE_ENV, MANIFEST, type Manifest } from "../../engine/cli/bundle.js"
import { buildServe } from "../../scripts/build-serve.ts"
import { servesTheConsole } from "../console/console-kit.ts"
import { adminUrl, freePort, send, withDatabase } from "../http/node-server-kit.ts"
import { onPostgres } from "../support/stores.ts"

const ROOT = join(import.meta.dirname, "..", "..")
// The bin, as `npx sokoni` and `npm start` run it (bin.ts hands over to it).
const BIN = join(ROOT, "engine", "cli", "sokoni.js")
const ADMIN = "adm_bundle_test"

let work: string
let bundleDir: string

/** A module hook that lists every module the process loads, written to $LOADED_OUT when it exits. */
const RECORDER = `import { registerHooks } from "node:module"
import { writeFileSync } from "node:fs"
const urls = []
registerHooks({ load(url, context, next) { urls.push(url); return next(url, context) } })
process.on("exit", () => writeFileSync(process.env.LOADED_OUT, urls.join("\\n")))
`

interface Served {
  readonly loaded: ReadonlyArray<string>
  readonly stdout: string
}

/** Runs `sokoni serve` with the bundle setting, lets `use` talk to it, stops it with SIGTERM; what it loaded and printed. */
const serveWith = async (bundle: string, args: ReadonlyArray<string>, use: (port: number) => Promise<void>): Promise<Served> => {
  const port = await freePort()
  const loadedOut = join(work, `loaded-${port}.txt`)
  const child: ChildProcess = spawn(
    process.execPath,
    ["--import", pathToFileURL(join(work, "recorder.mjs")).href, BIN, "serve", "--port", String(port), "--seed", "1", "--admin-token", ADMIN, ...args],
    { cwd: ROOT, env: { ...process.env, [BUNDLE_ENV]: bundle, LOADED_OUT: loadedOut }, stdio: ["ignore", "pipe", "pipe"] }
  )
  let stdout = ""
  let stderr = ""
  child.stdout?.on("data", (c: Buffer) => (stdout += c.toString("utf8")))
  child.stderr?.on("data", (c: Buffer) => (stderr += c.toString("utf8")))
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)))
  try {
    const until = Date.now() + 30_000
    while (!stdout.includes("ready in")) {
      if (child.exitCode !== null || Date.now() > until) throw new Error(`serve did not start:\n${stdout}\n${stderr}`)
      await new Promise((r) => setTimeout(r, 25))
    }
    await use(port)
  } finally {
    child.kill("SIGTERM")
  }
  expect(await exited).toBe(0)
  return { loaded: readFileSync(loadedOut, "utf8").split("\n"), stdout }
}

/** What any engine must answer: status, a new partner over the control API, and that partner's stocks. */
const servesTheApi = async (port: number) => {
  expect((await send(port, "GET", "/api/v1/status", {})).status).toBe(200)
  const created = await send(
    port,
    "POST",
    "/_sim/partners",
    { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
    JSON.stringify({ businessName: "Bundle Test", email: "bundle@sokoni.test", tier: "starter" })
  )
  expect(created.status).toBe(201)
  const { sandboxKey } = JSON.parse(created.body) as { sandboxKey: string }
  const stocks = await send(port, "GET", "/api/sandbox/v1/partner/stocks", { "x-api-key": sandboxKey })
  expect(stocks.status).toBe(200)
  expect((JSON.parse(stocks.body) as { stocks: Array<unknown> }).stocks.length).toBeGreaterThan(0)
}

const engineSources = (loaded: ReadonlyArray<string>) => loaded.filter((u) => u.startsWith(pathToFileURL(join(ROOT, "engine")).href))

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "sokoni-serve-bundle-"))
  writeFileSync(join(work, "recorder.mjs"), RECORDER)
  bundleDir = join(work, "bundle")
  await buildServe(bundleDir)
})
afterAll(() => rmSync(work, { recursive: true, force: true }))

describe("the bundled serve", () => {
  it("is what `sokoni serve` runs when fresh: one module instead of the engine's sources, serving the API and the console", async () => {
    const served = await serveWith(bundleDir, ["--store", "memory"], async (port) => {
      await servesTheApi(port)
      await servesTheConsole(port, ADMIN)
    })
    expect(served.loaded).toContain(pathToFileURL(join(bundleDir, "serve-main.js")).href)
    // The bin, the young generation's cap (set before anything loads, E-358) and the freshness check are all of the
    // engine that loads from source, and none is TypeScript: Node never loads its type stripper (E-531).
    const fromSource = [BIN, join(ROOT, "engine", "cli", "young-generation.js"), join(ROOT, "engine", "cli", "bundle.js")]
    expect(engineSources(served.loaded).sort()).toEqual(fromSource.map((f) => pathToFileURL(f).href).sort())
    expect(served.loaded.filter((url) => /\.[mc]?ts$/.test(url))).toEqual([])
    expect(served.stdout.split("\n")[0]).toBe("seed 1")
  })

  it("is not run once an input changed: serve runs from the sources instead, and still serves", async () => {
    const stale = join(work, "stale")
    cpSync(bundleDir, stale, { recursive: true })
    const manifest = JSON.parse(readFileSync(join(stale, MANIFEST), "utf8")) as Manifest
    const input = "engine/http/node-server.ts"
    expect(manifest.inputs[input]).toBeDefined()
    // The console's files are inlined, so they are inputs too: an edited page makes the bundle stale.
    expect(Object.keys(manifest.inputs)).toEqual(expect.arrayContaining(["engine/console/index.html", "engine/console/console.js", "engine/console/files.ts"]))
    writeFileSync(join(stale, MANIFEST), JSON.stringify({ ...manifest, inputs: { ...manifest.inputs, [input]: "0".repeat(64) } }))
    const served = await serveWith(stale, ["--store", "memory"], servesTheApi)
    expect(served.loaded).not.toContain(pathToFileURL(join(stale, "serve-main.js")).href)
    expect(served.loaded).toContain(pathToFileURL(join(ROOT, "engine", "http", "node-server.ts")).href)
  })

  it.skipIf(adminUrl === undefined)("serves the postgres store too", onPostgres, async () => {
    await withDatabase(adminUrl!, async (url) => {
      const served = await serveWith(bundleDir, ["--store", "postgres", "--database-url", url], servesTheApi)
      expect(served.loaded).toContain(pathToFileURL(join(bundleDir, "serve-main.js")).href)
      expect(served.stdout).toContain("store postgres")
    })
  })
})

describe("the serve build", () => {
  /** The build of `source` fails saying `message` (and each of `also`), and writes nothing. */
  const refuses = async (name: string, source: string, message: RegExp, ...also: ReadonlyArray<RegExp>) => {
    const entry = join(work, `${name}.ts`)
    writeFileSync(entry, source)
    const out = join(work, `out-${name}`)
    const build = buildServe(out, entry)
    await expect(build).rejects.toThrow(message)
    for (const more of also) await expect(build).rejects.toThrow(more)
    expect(existsSync(join(out, MANIFEST))).toBe(false)
  }

  it("refuses a bundle that would look for files beside itself", () =>
    refuses("meta", `export const here = import.meta.dirname\nconsole.log(here)\n`, /import\.meta/))

  it("refuses a bundle that would import a package at run time", () =>
    // with rolldown's reason in the error (not printed as a warning of its own)
    refuses(
      "foreign",
      `import { x } from "sokoni-no-such-package"\nconsole.log(x)\n`,
      /would import sokoni-no-such-package/,
      /Could not resolve 'sokoni-no-such-package'/
    ))

  it("records every bundled module with the content it was built from", () => {
    const manifest = JSON.parse(readFileSync(join(bundleDir, MANIFEST), "utf8")) as Manifest
    for (const file of [
      "engine/cli/serve-main.ts",
      "engine/cli/serve.ts",
      "engine/http/node-server.ts",
      "tsconfig.json",
      "scripts/build-serve.ts",
      "package.json"
    ])
      expect(Object.keys(manifest.inputs), file).toContain(file)
    expect(Object.keys(manifest.inputs).some((p) => p.endsWith("node_modules/effect/package.json"))).toBe(true)
    expect(Object.keys(manifest.inputs).some((p) => p.endsWith("node_modules/rolldown/package.json"))).toBe(true)
    expect(Object.keys(manifest.inputs).some((p) => p.startsWith("engine/conform/") || p.startsWith("scenarios/"))).toBe(false)
  })
})
