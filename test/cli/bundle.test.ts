/**
 * When the bundled `serve` may run (engine/cli/bundle.ts): only while every input and output has the content its
 * manifest records, judged by content, not by time; and only for `serve`. Fixture trees in a temporary directory;
 * the real build is exercised in serve-bundle.process.test.ts.
 */
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { BUNDLE_ENV, bundleState, cliModule, DEFAULT_BUNDLE_DIR, digest, MANIFEST, MANIFEST_FORMAT, type Manifest } from "../../engine/cli/bundle.js"

const SOURCE = new URL("../../engine/cli/main.ts", import.meta.url).href

let root: string
let dir: string

const write = (path: string, content: string) => {
  mkdirSync(join(path, ".."), { recursive: true })
  writeFileSync(path, content)
}

/** A tree with two inputs (one up a level, as node_modules is in a worktree) and a bundle built "from" them. */
const fixture = (overrides: Partial<Manifest> = {}) => {
  write(join(root, "src", "a.ts"), "export const a = 1\n")
  write(join(root, "lib", "b.js"), "export const b = 2\n")
  write(join(dir, "entry.js"), "console.log('bundled')\n")
  const manifest: Manifest = {
    format: MANIFEST_FORMAT,
    entry: "entry.js",
    inputs: { "src/a.ts": digest("export const a = 1\n"), "lib/b.js": digest("export const b = 2\n") },
    outputs: { "entry.js": digest("console.log('bundled')\n") },
    ...overrides
  }
  write(join(dir, MANIFEST), JSON.stringify(manifest))
}

beforeEach(() => {
  const base = mkdtempSync(join(tmpdir(), "sokoni-bundle-"))
  root = join(base, "repo")
  dir = join(base, "repo", "dist", "serve")
})
afterEach(() => rmSync(join(root, ".."), { recursive: true, force: true }))

describe("bundleState", () => {
  it("is fresh when every input and output has the recorded content", () => {
    fixture()
    expect(bundleState(dir, root)).toEqual({ fresh: true, entry: join(dir, "entry.js") })
  })

  it("is stale when an input's content changed, even with its old size and modification time", () => {
    fixture()
    const path = join(root, "src", "a.ts")
    writeFileSync(path, "export const a = 9\n")
    utimesSync(path, new Date(2000, 0, 1), new Date(2000, 0, 1))
    expect(bundleState(dir, root)).toEqual({ fresh: false, reason: "src/a.ts changed since the bundle was built" })
  })

  it("stays fresh when an input is only touched (a checkout rewrites files without changing them)", () => {
    fixture()
    utimesSync(join(root, "lib", "b.js"), new Date(2030, 0, 1), new Date(2030, 0, 1))
    expect(bundleState(dir, root).fresh).toBe(true)
  })

  it("is stale when an input is gone", () => {
    fixture()
    rmSync(join(root, "lib", "b.js"))
    expect(bundleState(dir, root)).toEqual({ fresh: false, reason: "lib/b.js is gone" })
  })

  it("is stale when the bundle itself is not what the build wrote (half-written, edited, replaced)", () => {
    fixture()
    writeFileSync(join(dir, "entry.js"), "console.log('bundled')\n// edited\n")
    expect(bundleState(dir, root)).toEqual({ fresh: false, reason: "entry.js is not the file the build wrote" })
    rmSync(join(dir, "entry.js"))
    expect(bundleState(dir, root).fresh).toBe(false)
  })

  it("is stale without a manifest, with a broken one, or with one of another format", () => {
    expect(bundleState(dir, root)).toEqual({ fresh: false, reason: `no bundle in ${dir}` })
    fixture()
    writeFileSync(join(dir, MANIFEST), "{ not json")
    expect(bundleState(dir, root).fresh).toBe(false)
    fixture({ format: MANIFEST_FORMAT + 1 })
    expect(bundleState(dir, root)).toEqual({ fresh: false, reason: `manifest format ${MANIFEST_FORMAT + 1}, expected ${MANIFEST_FORMAT}` })
  })

  it("is stale when the manifest vouches for nothing: no inputs, or an entry it did not write", () => {
    fixture({ inputs: {} })
    expect(bundleState(dir, root)).toEqual({ fresh: false, reason: "the manifest names no entry or no inputs" })
    fixture({ entry: "other.js" })
    expect(bundleState(dir, root).fresh).toBe(false)
  })
})

describe("cliModule", () => {
  it("runs a fresh bundle for serve, named by SOKONI_SERVE_BUNDLE", () => {
    // cliModule checks inputs against the real repository: an absolute path keeps this input in the fixture tree.
    const known = join(root, "known.txt")
    write(known, "stand-in")
    fixture({ inputs: { [known]: digest("stand-in") } })
    expect(cliModule(["serve", "--port", "1"], { [BUNDLE_ENV]: dir })).toBe(pathToFileURL(join(dir, "entry.js")).href)
  })

  it("runs the sources for every other command, for SOKONI_SERVE_BUNDLE=off, and for a stale bundle", () => {
    const known = join(root, "known.txt")
    write(known, "stand-in")
    fixture({ inputs: { [known]: digest("stand-in") } })
    expect(cliModule(["conform", "--base", "x"], { [BUNDLE_ENV]: dir })).toBe(SOURCE)
    expect(cliModule(["scenario", "run", "serve"], { [BUNDLE_ENV]: dir })).toBe(SOURCE)
    expect(cliModule(["serve"], { [BUNDLE_ENV]: "off" })).toBe(SOURCE)
    writeFileSync(known, "changed")
    expect(cliModule(["serve"], { [BUNDLE_ENV]: dir })).toBe(SOURCE)
  })

  it("looks in dist/serve when SOKONI_SERVE_BUNDLE is unset (or empty)", () => {
    expect(DEFAULT_BUNDLE_DIR).toBe(join(import.meta.dirname, "..", "..", "dist", "serve"))
    const state = bundleState(DEFAULT_BUNDLE_DIR)
    const expected = state.fresh ? pathToFileURL(state.entry).href : SOURCE
    expect(cliModule(["serve"], {})).toBe(expected)
    expect(cliModule(["serve"], { [BUNDLE_ENV]: "" })).toBe(expected)
  })
})
