/**
 * The rolldown plugin both bundles use for the console's files (engine/console/files.ts, E-380): it loads that module
 * as one holding every console file's content, since a bundle cannot read beside itself. `onRead` hears each file
 * read (the module's own source too), so the serve bundle's manifest can record them as inputs.
 */
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import type { Plugin } from "rolldown"
import { ROOT } from "../engine/cli/bundle.js"
import { CONSOLE_FILE_NAME } from "../engine/console/files.ts"

export const CONSOLE_DIR = join(ROOT, "engine", "console")
const MODULE = join(CONSOLE_DIR, "files.ts")

/** The console's files, by name, in name order. */
export const consoleFiles = (): ReadonlyArray<{ readonly name: string; readonly path: string }> =>
  readdirSync(CONSOLE_DIR)
    .filter((name) => CONSOLE_FILE_NAME.test(name))
    .sort()
    .map((name) => ({ name, path: join(CONSOLE_DIR, name) }))

/** The module that replaces files.ts in a bundle: the same exports, the content inlined. */
export const inlinedModule = (files: ReadonlyArray<{ readonly name: string; readonly content: string }>): string =>
  [
    `export const CONSOLE_FILE_NAME = ${CONSOLE_FILE_NAME.toString()}`,
    `const FILES = new Map(${JSON.stringify(files.map((f) => [f.name, f.content]))})`,
    "export const consoleFile = (name) => FILES.get(name)",
    ""
  ].join("\n")

export const inlineConsoleFiles = (onRead: (path: string, bytes: Buffer) => void = () => {}): Plugin => ({
  name: "sokoni-inline-console-files",
  load(id) {
    if (id !== MODULE) return null
    onRead(MODULE, readFileSync(MODULE))
    const files = consoleFiles().map(({ name, path }) => {
      const bytes = readFileSync(path)
      onRead(path, bytes)
      return { name, content: bytes.toString("utf8") }
    })
    return inlinedModule(files)
  }
})
