/**
 * The README is read on a fresh clone: every link and every file it names in a link must be in the repository (a
 * clone has no `../shared/`), and none may climb out of it.
 */
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"

const ROOT = join(import.meta.dirname, "..", "..")

/** The targets of the markdown links `[text](target)` of `markdown`, anchors and web addresses left out. */
const localLinks = (markdown: string): Array<string> =>
  [...markdown.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => (m[1] ?? "").split("#")[0] ?? "").filter((target) => target !== "" && !/^[a-z]+:/i.test(target))

describe("README links", () => {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8")

  it("finds the links of a line, without anchors or web addresses", () => {
    expect(localLinks("see [a](docs/a.md#x), [b](https://x.test/b) and [c](../c.md)")).toEqual(["docs/a.md", "../c.md"])
  })

  it("every local link points at a file of the repository, none outside it", () => {
    const links = localLinks(readme)
    expect(links.length).toBeGreaterThan(0)
    expect(links.filter((l) => l.startsWith("..") || l.startsWith("/"))).toEqual([])
    expect(links.filter((l) => !existsSync(join(ROOT, l)))).toEqual([])
  })

  it("names no file outside the repository in its text either", () => {
    expect(readme.match(/\.\.\/[\w./-]+/g) ?? []).toEqual([])
  })
})
