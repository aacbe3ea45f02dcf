/**
 * `node scripts/build-package.ts [--out DIR]` (npm's `prepack`): bundles the whole `sokoni` command line
 * (engine/cli/main.ts) into dist/cli/, the code an installed package runs (E-330). Node refuses to strip the types of
 * files under node_modules, so an installed copy cannot run the .ts sources; this JavaScript is what it runs instead,
 * through the bin (engine/cli/sokoni.js).
 *
 * Our own modules are bundled; every package stays an import, resolved at run time from the installing project's
 * node_modules, so each must be one of package.json's `dependencies`: the build refuses, naming it, a package that
 * is not (a dev dependency imported at run time would break `npm install --omit=dev`). Lazy imports stay lazy
 * (chunks). A module that finds files beside itself (`import.meta.dirname`: the contract for the validator, the
 * scenario files for conform) is given the directory it has in the repository, written relative to dist/cli, so the
 * package ships those files at the same paths (package.json "files"); any other use of `import.meta` is refused.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from "node:fs"
import { isBuiltin } from "node:module"
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path"
import { parseArgs } from "node:util"
import type { OutputChunk } from "rolldown"
import { ROOT } from "../engine/cli/bundle.js"
import { inlineConsoleFiles } from "./console-files.ts"

const ENTRY_SOURCE = join(ROOT, "engine", "cli", "main.ts")
export const DEFAULT_PACKAGE_DIR = join(ROOT, "dist", "cli")
export const ENTRY = "main.js"

export interface BuiltPackage {
  readonly dir: string
  readonly files: number
  readonly bytes: number
  /** The packages the bundle imports at run time (sorted): each is one of package.json's dependencies. */
  readonly packages: ReadonlyArray<string>
}

/** The package a bare import names: `yaml`, `effect/cli` -> `effect`, `@effect/sql-pg/x` -> `@effect/sql-pg`. */
export const packageOf = (specifier: string): string => {
  const parts = specifier.split("/")
  return (specifier.startsWith("@") ? parts.slice(0, 2) : parts.slice(0, 1)).join("/")
}

const isBare = (id: string) => !id.startsWith(".") && !id.startsWith("\0") && !isAbsolute(id)

/**
 * `import.meta.dirname` in `file`, rewritten for a bundle in `outDir`: the file's own directory, as a path from the
 * bundle's (`(import.meta.dirname + "/../../spec")`; the modules join or resolve it, which folds the `..`).
 */
export const rewriteDirname = (code: string, file: string, outDir: string): string => {
  const fromBundle = relative(outDir, dirname(file)).split(sep).join("/")
  return code.replaceAll("import.meta.dirname", fromBundle === "" ? "import.meta.dirname" : `(import.meta.dirname + ${JSON.stringify(`/${fromBundle}`)})`)
}

/** Uses of `import.meta` in bundled code other than the rewritten dirname (which stays right beside the bundle). */
export const strayImportMeta = (code: string): ReadonlyArray<string> => [...code.matchAll(/import\.meta(?!\.dirname\b)[.\w]*/g)].map((m) => m[0])

const dependenciesOf = (packageJson: string): ReadonlySet<string> =>
  new Set(Object.keys((JSON.parse(readFileSync(packageJson, "utf8")) as { dependencies?: Record<string, string> }).dependencies ?? {}))

/**
 * Builds the package's bundle of `entry` into `dir`: written beside it and moved into place once every check passed, so
 * `dir` is never half-written and a refused build leaves the previous one.
 */
export const buildPackage = async (dir: string = DEFAULT_PACKAGE_DIR, entry: string = ENTRY_SOURCE): Promise<BuiltPackage> => {
  const { rolldown } = await import("rolldown")
  const dependencies = dependenciesOf(join(ROOT, "package.json"))
  const bundle = await rolldown({
    input: { [ENTRY.replace(/\.js$/, "")]: entry },
    platform: "node",
    logLevel: "warn",
    // Modules both imported lazily and eagerly stay in the eager chunk: rolldown says so, and that is intended.
    onLog: (level, log, print) => (log.code === "INEFFECTIVE_DYNAMIC_IMPORT" ? undefined : print(level, log)),
    external: (id) => isBare(id),
    plugins: [
      inlineConsoleFiles(),
      {
        name: "sokoni-dirname-from-bundle",
        transform: (code, id) => (isAbsolute(id) && !id.includes(`${sep}node_modules${sep}`) ? rewriteDirname(code, id, dir) : null)
      }
    ]
  })
  const staging = `${dir}.${process.pid}.tmp`
  rmSync(staging, { recursive: true, force: true })
  let chunks: ReadonlyArray<OutputChunk>
  try {
    const { output } = await bundle.write({ dir: staging, format: "esm", comments: false, entryFileNames: "[name].js", chunkFileNames: "[name]-[hash].js" })
    chunks = output.filter((o): o is OutputChunk => o.type === "chunk")
  } finally {
    await bundle.close()
  }
  try {
    const ownFiles = new Set(chunks.map((c) => c.fileName))
    const imported = chunks.flatMap((c) => [...c.imports, ...c.dynamicImports]).filter((i) => !ownFiles.has(i) && !isBuiltin(i))
    const packages = [...new Set(imported.map(packageOf))].sort()
    const undeclared = packages.filter((p) => !dependencies.has(p))
    if (undeclared.length > 0)
      throw new Error(
        `the CLI imports ${undeclared.join(", ")} at run time, which package.json does not list in "dependencies" (npm install --omit=dev would break it)`
      )
    for (const chunk of chunks) {
      const stray = strayImportMeta(chunk.code)
      if (stray.length > 0) throw new Error(`${chunk.fileName} uses ${[...new Set(stray)].join(", ")}: only import.meta.dirname can be placed from the bundle`)
    }
    rmSync(dir, { recursive: true, force: true })
    mkdirSync(dirname(dir), { recursive: true })
    renameSync(staging, dir)
    const bytes = chunks.reduce((sum, c) => sum + Buffer.byteLength(c.code), 0)
    return { dir, files: chunks.length, bytes, packages }
  } finally {
    if (existsSync(staging)) rmSync(staging, { recursive: true, force: true })
  }
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { out: { type: "string" } } })
  try {
    const built = await buildPackage(values.out === undefined ? DEFAULT_PACKAGE_DIR : resolve(values.out))
    console.log(
      `build:package: ${relative(ROOT, built.dir)}/${ENTRY} and ${built.files - 1} lazy chunks (${(built.bytes / 1e6).toFixed(1)} MB), importing ${built.packages.join(", ")}`
    )
  } catch (error) {
    console.error(`build:package failed: ${error instanceof Error ? error.message : String(error)}`)
    process.exitCode = 1
  }
}
