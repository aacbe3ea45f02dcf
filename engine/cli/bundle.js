// @ts-check
/**
 * Which code `sokoni` runs: the bundled `serve` (dist/serve/, built by scripts/build-serve.ts) when the command is
 * `serve` and the bundle is fresh, the sources (main.ts) otherwise. Owns the manifest format and the freshness rule;
 * building the bundle is scripts/build-serve.ts's.
 *
 * Fresh means: every file the bundle was built from (each bundled module, as the bundler read it; the package.json
 * that governs each one; tsconfig.json; the build script; the bundler's package.json) has today the content it had
 * then, and the bundle's own files are the ones that build wrote. Compared by SHA-256 of content, never by
 * modification time, so a checkout, a copy or a clock that goes backwards cannot make a stale bundle look fresh;
 * hashing the ~300 files takes about 10 ms. Anything missing, unreadable or different means: run from source.
 * Only imports node builtins: it runs before anything else is loaded. Plain JavaScript (types in JSDoc, checked by
 * tsc) for the same reason: a TypeScript module in the launcher makes Node load its type stripper at every start (E-531).
 */
import { hash } from "node:crypto"
import { readFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { pathToFileURL } from "node:url"

/** The repository root: inputs are recorded relative to it (the bundle is never built from this file itself). */
export const ROOT = resolve(import.meta.dirname, "..", "..")
export const DEFAULT_BUNDLE_DIR = join(ROOT, "dist", "serve")
export const MANIFEST = "manifest.json"
/** Raised whenever the manifest's meaning changes, so an old manifest is never read with new rules. */
export const MANIFEST_FORMAT = 1
/** SOKONI_SERVE_BUNDLE: "off" always runs the sources; a directory uses the bundle there instead of dist/serve. */
export const BUNDLE_ENV = "SOKONI_SERVE_BUNDLE"

/**
 * What a bundle's manifest.json holds: its format, its entry file (in the bundle directory), each input (path relative
 * to ROOT -> SHA-256 of the content the bundle was built from) and each output (file in the bundle directory -> SHA-256
 * of what the build wrote).
 * @typedef {{
 *   readonly format: number,
 *   readonly entry: string,
 *   readonly inputs: Readonly<Record<string, string>>,
 *   readonly outputs: Readonly<Record<string, string>>
 * }} Manifest
 */

/** @type {(content: string | Uint8Array) => string} */
export const digest = (content) => hash("sha256", content)

/** @typedef {{ readonly fresh: true, readonly entry: string } | { readonly fresh: false, readonly reason: string }} BundleState */

/** @type {(path: string) => Buffer | undefined} */
const contentOf = (path) => {
  try {
    return readFileSync(path)
  } catch {
    return undefined
  }
}

/** Whether the bundle in `dir` may run, checked against the files under `root`; when not, why (one line). */
/** @type {(dir: string, root?: string) => BundleState} */
export const bundleState = (dir, root = ROOT) => {
  const raw = contentOf(join(dir, MANIFEST))
  if (raw === undefined) return { fresh: false, reason: `no bundle in ${dir}` }
  /** @type {Manifest} */
  let manifest
  try {
    manifest = JSON.parse(raw.toString("utf8"))
  } catch {
    return { fresh: false, reason: `${join(dir, MANIFEST)} is not JSON` }
  }
  if (manifest.format !== MANIFEST_FORMAT) return { fresh: false, reason: `manifest format ${String(manifest.format)}, expected ${MANIFEST_FORMAT}` }
  const outputs = Object.entries(manifest.outputs ?? {})
  const inputs = Object.entries(manifest.inputs ?? {})
  if (typeof manifest.entry !== "string" || !outputs.some(([file]) => file === manifest.entry) || inputs.length === 0)
    return { fresh: false, reason: "the manifest names no entry or no inputs" }
  for (const [file, expected] of outputs) {
    const content = contentOf(join(dir, file))
    if (content === undefined || digest(content) !== expected) return { fresh: false, reason: `${file} is not the file the build wrote` }
  }
  for (const [path, expected] of inputs) {
    const content = contentOf(resolve(root, path))
    if (content === undefined) return { fresh: false, reason: `${path} is gone` }
    if (digest(content) !== expected) return { fresh: false, reason: `${path} changed since the bundle was built` }
  }
  return { fresh: true, entry: join(dir, manifest.entry) }
}

/**
 * The module bin.ts imports for this command line: the bundle's entry for `serve` when it is fresh, main.ts
 * otherwise (every other command, SOKONI_SERVE_BUNDLE=off, no bundle, a stale one).
 */
/** @type {(args: ReadonlyArray<string>, env: NodeJS.ProcessEnv) => string} */
export const cliModule = (args, env) => {
  const source = new URL("./main.ts", import.meta.url).href
  const setting = env[BUNDLE_ENV]
  if (args[0] !== "serve" || setting === "off") return source
  const state = bundleState(setting === undefined || setting === "" ? DEFAULT_BUNDLE_DIR : resolve(setting))
  return state.fresh ? pathToFileURL(state.entry).href : source
}
