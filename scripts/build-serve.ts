/**
 * `npm run build:serve [-- --if-stale] [-- --out DIR]`: bundles `sokoni serve` (engine/cli/serve-main.ts, with the
 * engine and the parts of effect, jose and sql-pg it uses) into one file, dist/serve/serve-main.js, plus a manifest
 * of what it was built from. bin.ts runs the bundle for `sokoni serve` only while every one of those files still has
 * the content it had here (engine/cli/bundle.ts): loading one ~1.4 MB module instead of ~570 separate ones halves
 * warm start-up (E-260). `--if-stale` builds only when the current bundle is not fresh (npm start uses it).
 *
 * Needs rolldown, which the dev dependencies bring (through vite, vitest's bundler); without it, nothing is built and
 * serve runs from the sources, as correctly and only slower. The bundle refuses, rather than writes, any output
 * that would still read from beside itself (`import.meta`) or import anything but a Node builtin.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { isBuiltin } from "node:module"
import { dirname, isAbsolute, join, relative, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
// Types only (erased): without rolldown installed, main() says so and builds nothing.
import type { LogLevel, LogOrStringHandler, RolldownLog } from "rolldown"
import { bundleState, DEFAULT_BUNDLE_DIR, digest, MANIFEST, MANIFEST_FORMAT, type Manifest, ROOT } from "../engine/cli/bundle.js"
import { builtinsWithoutFacades } from "./builtins-plugin.ts"
import { inlineConsoleFiles } from "./console-files.ts"

const ENTRY_SOURCE = join(ROOT, "engine", "cli", "serve-main.ts")
const ENTRY = "serve-main.js"

export interface Built {
  readonly dir: string
  readonly inputs: number
  readonly bytes: number
}

/** The nearest package.json at or above `file`'s directory: it decides how the file's package resolves and shakes. */
const packageJsonOf = (file: string): string | undefined => {
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    const candidate = join(dir, "package.json")
    if (existsSync(candidate)) return candidate
    if (dirname(dir) === dir) return undefined
  }
}

/** Writes `content` to `path` so that a reader sees the old file or the new one, never half of one. */
const replaceFile = (path: string, content: string) => {
  const temporary = `${path}.${process.pid}.tmp`
  writeFileSync(temporary, content)
  renameSync(temporary, path)
}

/**
 * Builds the bundle of `entry` (serve-main.ts; tests pass others) into `dir` (default dist/serve) and returns what it
 * holds. Throws, writing nothing, when the bundle would be unsafe to run from there.
 */
export const buildServe = async (dir: string = DEFAULT_BUNDLE_DIR, entry: string = ENTRY_SOURCE): Promise<Built> => {
  const { rolldown } = await import("rolldown")
  // What each module's content was as the bundler got it: this plugin reads every file itself and hands the same
  // bytes over, so a file edited during the build is recorded with the content that was bundled, not the new one.
  const read = new Map<string, string>()
  // The console's files are no modules: the plugin that inlines them says what it read, recorded as inputs too.
  const served = new Map<string, string>()
  // An import rolldown cannot resolve becomes an import of the bundle at run time, which the check below refuses,
  // naming it: its UNRESOLVED_IMPORT warning is kept for that error rather than printed beside it as a warning box.
  // Were the build to go on all the same (an import shaken out of the bundle), the warning is printed after all.
  const unresolved: Array<{ readonly level: LogLevel; readonly log: RolldownLog; readonly print: LogOrStringHandler }> = []
  // An import that would be undefined at run time (a builtin's getter not exported by builtins-plugin.ts, or a name a
  // module does not export) fails the build instead of a request.
  const undefinedImports: Array<string> = []
  const bundle = await rolldown({
    input: entry,
    platform: "node",
    // yaml's Node entry is CommonJS, whose require of builtins the bundler would turn into an import.meta lookup;
    // its ESM build (the package's own `default` export) is the same parser with no Node imports (`serve --faults`).
    resolve: { alias: { yaml: join(dirname(fileURLToPath(import.meta.resolve("yaml/package.json"))), "browser", "index.js") } },
    logLevel: "warn",
    onLog(level, log, print) {
      if (log.code === "UNRESOLVED_IMPORT") unresolved.push({ level, log, print })
      else if (log.code === "IMPORT_IS_UNDEFINED" || log.code === "MISSING_EXPORT") undefinedImports.push(log.message)
      else print(level, log)
    },
    plugins: [
      builtinsWithoutFacades(),
      inlineConsoleFiles((path, bytes) => (path.endsWith(".ts") ? read : served).set(path, digest(bytes))),
      {
        name: "sokoni-record-inputs",
        load(id) {
          if (!isAbsolute(id) || !existsSync(id)) return null
          const bytes = readFileSync(id)
          read.set(id, digest(bytes))
          return bytes.toString("utf8")
        }
      }
    ]
  })
  let output: Awaited<ReturnType<typeof bundle.generate>>["output"]
  try {
    ;({ output } = await bundle.generate({ format: "esm", codeSplitting: false, comments: false }))
  } finally {
    await bundle.close()
  }
  if (undefinedImports.length > 0) throw new Error(`the bundle would read undefined imports:\n  ${undefinedImports.join("\n  ")}`)
  const chunk = output.find((o) => o.type === "chunk" && o.isEntry)
  if (chunk === undefined || chunk.type !== "chunk" || output.length !== 1)
    throw new Error(`expected one entry chunk, got ${output.map((o) => o.fileName).join(", ")}`)
  const foreign = [...chunk.imports, ...chunk.dynamicImports].filter((i) => !isBuiltin(i))
  if (foreign.length > 0) {
    const why = unresolved.map(({ log }) => `\n  ${log.message}`).join("")
    throw new Error(`the bundle would import ${foreign.join(", ")} at run time, outside what its manifest vouches for${why}`)
  }
  for (const { level, log, print } of unresolved) print(level, log)
  if (chunk.code.includes("import.meta"))
    throw new Error("the bundle uses import.meta: some module finds files beside itself, which breaks once it lives in dist/serve")

  const inputs = new Map<string, string>()
  const record = (file: string, hash: string) => inputs.set(relative(ROOT, file), hash)
  const files = chunk.moduleIds.filter((id) => isAbsolute(id))
  for (const file of files) {
    const hash = read.get(file)
    if (hash === undefined) throw new Error(`${file} was bundled without passing through the recording plugin`)
    record(file, hash)
  }
  const rolldownEntry = fileURLToPath(import.meta.resolve("rolldown"))
  const governing = new Set([...files, rolldownEntry].map(packageJsonOf).filter((p) => p !== undefined))
  for (const file of [...governing, join(ROOT, "tsconfig.json"), fileURLToPath(import.meta.url)]) record(file, digest(readFileSync(file)))
  for (const [file, hash] of served) record(file, hash)

  mkdirSync(dir, { recursive: true })
  const manifest: Manifest = {
    format: MANIFEST_FORMAT,
    entry: ENTRY,
    inputs: Object.fromEntries([...inputs].sort(([a], [b]) => (a < b ? -1 : 1))),
    outputs: { [ENTRY]: digest(chunk.code) }
  }
  // Bundle first, manifest last: in between, the old manifest's output hash no longer matches, so nothing runs it.
  replaceFile(join(dir, ENTRY), chunk.code)
  replaceFile(join(dir, MANIFEST), `${JSON.stringify(manifest, null, 1)}\n`)
  return { dir, inputs: inputs.size, bytes: Buffer.byteLength(chunk.code) }
}

const main = async () => {
  const { values } = parseArgs({ options: { "if-stale": { type: "boolean", default: false }, out: { type: "string" } } })
  const dir = values.out === undefined ? DEFAULT_BUNDLE_DIR : resolve(values.out)
  if (values["if-stale"]) {
    const state = bundleState(dir)
    if (state.fresh) return console.log(`build:serve: ${relative(ROOT, dir)} is fresh`)
  }
  try {
    import.meta.resolve("rolldown")
  } catch {
    return console.log("build:serve: rolldown is not installed (a dev dependency): sokoni serve runs from the sources")
  }
  const built = await buildServe(dir)
  console.log(`build:serve: ${relative(ROOT, built.dir)}/${ENTRY} (${(built.bytes / 1e6).toFixed(1)} MB from ${built.inputs} files)`)
}

if (import.meta.main) {
  try {
    await main()
  } catch (error) {
    console.error(`build:serve failed: ${error instanceof Error ? error.message : String(error)}`)
    process.exitCode = 1
  }
}
