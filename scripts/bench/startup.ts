/**
 * The start-up part of the bench: how long `sokoni serve` (the bin, engine/cli/sokoni.js) takes from spawn to its first 200 on GET /api/v1/status,
 * per store, from the bundle (dist/serve, what `serve` runs when it is fresh) and from the sources
 * (SOKONI_SERVE_BUNDLE=off), with Node's compile cache off, cold and warm. Builds the bundle first when it is missing
 * or stale, as `npm start` does; the warm runs of bundle and sources alternate, so both see the same machine.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { BUNDLE_ENV, bundleState, DEFAULT_BUNDLE_DIR } from "../../engine/cli/bundle.js"
import { buildServe } from "../build-serve.ts"
import type { StartupRow } from "./report.ts"
import { freePort, freshDatabase, SERVER_CORE, type Store, spawnPinned, stop, waitForHttp } from "./targets.ts"

type Code = "bundle" | "sources"

/** One `serve` start: spawn → first 200 from /api/v1/status, and the "ready in" it printed. */
const startOnce = async (env: NodeJS.ProcessEnv, storeArgs: readonly string[]): Promise<{ ms: number; selfReported: number }> => {
  const port = await freePort()
  const started = performance.now()
  const child = spawnPinned(SERVER_CORE, ["engine/cli/sokoni.js", "serve", "--port", String(port), ...storeArgs, "--seed", "1"], env)
  let selfReported = Number.NaN
  child.stdout?.on("data", (chunk: Buffer) => {
    const match = /ready in (\d+) ms/.exec(chunk.toString())
    if (match) selfReported = Number(match[1])
  })
  await waitForHttp(`http://127.0.0.1:${port}/api/v1/status`, child, 30_000, true)
  const ms = performance.now() - started
  await new Promise((r) => setTimeout(r, 50)) // let the "ready in" line arrive
  await stop(child)
  return { ms, selfReported }
}

/** A fresh bundle, built when needed; false when it cannot be (no rolldown), and then only the sources are measured. */
const ensureBundle = async (log: (line: string) => void): Promise<boolean> => {
  const state = bundleState(DEFAULT_BUNDLE_DIR)
  if (state.fresh) return true
  log(`  [startup] ${state.reason}: building the serve bundle (npm run build:serve)`)
  try {
    await buildServe()
    return bundleState(DEFAULT_BUNDLE_DIR).fresh
  } catch (error) {
    log(`  [startup] no bundle: ${error instanceof Error ? error.message : String(error)}; measuring the sources only`)
    return false
  }
}

export const measureStartup = async (stores: readonly Store[], runs: number, log: (line: string) => void): Promise<StartupRow[]> => {
  const { NODE_COMPILE_CACHE: _, [BUNDLE_ENV]: __, ...base } = process.env
  const bundled = await ensureBundle(log)
  const codes: Code[] = bundled ? ["bundle", "sources"] : ["sources"]
  const codeEnv = (code: Code): NodeJS.ProcessEnv => (code === "bundle" ? {} : { [BUNDLE_ENV]: "off" })
  const rows: StartupRow[] = []
  const record = (row: StartupRow) => {
    log(`  [startup] ${row.store}, ${row.code}, compile cache ${row.mode}: ${row.ms.map((v) => v.toFixed(0)).join(" / ")} ms`)
    rows.push(row)
  }
  const series = async (store: Store, storeArgs: readonly string[], mode: string, envOf: (code: Code) => NodeJS.ProcessEnv, count: number) => {
    const results = new Map<Code, { ms: number; selfReported: number }[]>(codes.map((c) => [c, []]))
    for (let i = 0; i < count; i++) for (const code of codes) results.get(code)!.push(await startOnce({ ...base, ...envOf(code) }, storeArgs))
    for (const code of codes) {
      const r = results.get(code)!
      record({ store, code, mode, ms: r.map((x) => x.ms), selfReported: r.map((x) => x.selfReported) })
    }
  }
  const cacheDir = mkdtempSync(join(tmpdir(), "sokoni-bench-cache-"))
  try {
    // The cache a user's start gets: the one the launcher turns on itself (module.enableCompileCache(), in the
    // default directory under the temporary directory), here a directory of its own per code. Not NODE_COMPILE_CACHE:
    // that one, set before Node starts, also keeps what the type stripper made of the launcher's TypeScript, which a
    // user's start never has (E-531).
    const cached = (code: Code) => {
      mkdirSync(join(cacheDir, code), { recursive: true })
      return { ...codeEnv(code), TMPDIR: join(cacheDir, code) }
    }
    for (const store of stores) {
      const storeArgs = store === "memory" ? ["--store", "memory"] : ["--store", "postgres", "--database-url", await freshDatabase()]
      if (store === "memory") {
        await series(store, storeArgs, "off", (code) => ({ ...codeEnv(code), NODE_DISABLE_COMPILE_CACHE: "1" }), runs)
        await series(store, storeArgs, "cold (empty dir)", cached, 1)
      } else {
        // The first start on a new database creates its schema: not a start-up a user waits for twice.
        await series(store, storeArgs, "warm, new database", cached, 1)
      }
      await series(store, storeArgs, "warm", cached, runs)
    }
  } finally {
    rmSync(cacheDir, { recursive: true, force: true })
  }
  return rows
}
