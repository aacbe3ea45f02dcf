/**
 * The console's files in the bundles (E-380): the module that replaces engine/console/files.ts in dist/serve and
 * dist/cli answers every file as the sources do, and nothing else (the module itself, a path out of the folder).
 */
import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { CONSOLE_FILE_NAME, consoleFile } from "../../engine/console/files.ts"
import { consoleFiles, inlinedModule } from "../../scripts/console-files.ts"

describe("the console's files, inlined", () => {
  it("answer each file as the sources read it, and no other name", async () => {
    const files = consoleFiles()
    expect(files.map((f) => f.name)).toEqual(expect.arrayContaining(["index.html", "console.js", "console.css", "icon.svg"]))
    const code = inlinedModule(files.map((f) => ({ name: f.name, content: readFileSync(f.path, "utf8") })))
    const bundled = (await import(`data:text/javascript,${encodeURIComponent(code)}`)) as { consoleFile: typeof consoleFile; CONSOLE_FILE_NAME: RegExp }
    for (const { name } of files) expect([name, bundled.consoleFile(name)]).toEqual([name, consoleFile(name)])
    expect(bundled.CONSOLE_FILE_NAME.source).toBe(CONSOLE_FILE_NAME.source)
    for (const stray of ["files.ts", "../../package.json", "missing.js"]) {
      expect(bundled.consoleFile(stray)).toBeUndefined()
      expect(consoleFile(stray)).toBeUndefined()
    }
  })
})
