/**
 * scripts/build-package.ts, the bundle an installed package runs (E-330): what it rewrites and what it refuses. The
 * tarball itself, installed and run, is test/cli/package.process.test.ts's.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { buildPackage, packageOf, rewriteDirname, strayImportMeta } from "../../scripts/build-package.ts"

let work: string
beforeEach(() => {
  work = mkdtempSync(join(tmpdir(), "sokoni-build-package-"))
})
afterEach(() => rmSync(work, { recursive: true, force: true }))

/** Builds a one-file entry with this content into work/out. */
const buildEntry = (code: string) => {
  const entry = join(work, "entry.ts")
  writeFileSync(entry, code)
  return buildPackage(join(work, "out"), entry)
}

describe("the package build's rules", () => {
  it("names the package of a bare import, scoped or not, without its subpath", () => {
    expect(packageOf("yaml")).toBe("yaml")
    expect(packageOf("effect/cli")).toBe("effect")
    expect(packageOf("ajv/dist/2020.js")).toBe("ajv")
    expect(packageOf("@effect/platform-node/NodeRuntime")).toBe("@effect/platform-node")
  })

  it("writes a module's import.meta.dirname as its own directory seen from the bundle's", () => {
    expect(rewriteDirname("join(import.meta.dirname, 'openapi.yaml')", "/repo/spec/validator.ts", "/repo/dist/cli")).toBe(
      `join((import.meta.dirname + "/../../spec"), 'openapi.yaml')`
    )
    expect(rewriteDirname("f(import.meta.dirname)", "/repo/dist/cli/x.ts", "/repo/dist/cli")).toBe("f(import.meta.dirname)")
  })

  it("finds every import.meta but the dirname", () => {
    expect(strayImportMeta(`a(import.meta.dirname + "/x"); b(import.meta.url); c(import.meta.resolve("y")); d(import.meta)`)).toEqual([
      "import.meta.url",
      "import.meta.resolve",
      "import.meta"
    ])
  })
})

describe("buildPackage", () => {
  it("bundles an entry that imports dependencies and finds a file beside itself", async () => {
    const built = await buildEntry(
      `import { parse } from "yaml"\nimport { join } from "node:path"\nconsole.log(parse("a: 1"), join(import.meta.dirname, "x.yaml"))\n`
    )
    expect(built.packages).toEqual(["yaml"])
    expect(readFileSync(join(work, "out", "main.js"), "utf8")).toContain(`import.meta.dirname + "/.."`)
  })

  it("refuses, naming it, a package that is not one of the dependencies (a dev dependency would break --omit=dev)", async () => {
    await expect(buildEntry(`import { describe } from "vitest"\nconsole.log(describe)\n`)).rejects.toThrow(/imports vitest at run time/)
    expect(existsSync(join(work, "out"))).toBe(false)
  })

  it("refuses any import.meta but the dirname", async () => {
    await expect(buildEntry(`console.log(new URL("./x.yaml", import.meta.url))\n`)).rejects.toThrow(/uses import\.meta\.url/)
  })
})
