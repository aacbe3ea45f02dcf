/**
 * The console's files (E-380): a static page, plain ES modules and a style sheet kept in this folder and served as
 * they are, with no build step (`GET /_sim/console`, `/_sim/console/assets/{file}`). From the sources they are read
 * from beside this module at each request, so an edit shows at the next reload. The bundles (`dist/serve`,
 * `dist/cli`) cannot read beside themselves: their builds replace this module by one holding the files' content
 * (scripts/console-files.ts), and the serve bundle's manifest records each file, so an edit makes it stale.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"

/** The names a console file may have: a lower-case stem and one of the served extensions. */
export const CONSOLE_FILE_NAME = /^[a-z0-9-]+\.(html|js|css|svg)$/

/** The content of the console file `name`, or undefined when there is none. */
export const consoleFile = (name: string): string | undefined => {
  if (!CONSOLE_FILE_NAME.test(name)) return undefined
  try {
    return readFileSync(join(import.meta.dirname, name), "utf8")
  } catch {
    return undefined
  }
}
