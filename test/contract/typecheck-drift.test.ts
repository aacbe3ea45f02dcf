/**
 * The contract types the engine: on a scratch copy of the engine, a wire object with a field the contract lacks, or
 * without one it requires, makes `tsc` fail, while the untouched copy passes. This is what keeps handlers and
 * services from drifting from spec/openapi.yaml without anyone noticing.
 */
import { execFileSync } from "node:child_process"
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const ROOT = join(import.meta.dirname, "..", "..")

const typecheck = (dir: string): string => {
  try {
    execFileSync(join(ROOT, "node_modules", ".bin", "tsc"), ["--noEmit", "-p", join(dir, "tsconfig.json")], { encoding: "utf8", stdio: "pipe" })
    return ""
  } catch (error) {
    return String((error as { stdout?: string }).stdout ?? error)
  }
}

/** Replaces `from` (which must occur exactly once) in a file of the copy. */
const edit = (dir: string, file: string, from: string, to: string) => {
  const path = join(dir, file)
  const text = readFileSync(path, "utf8")
  expect(text.split(from).length - 1, `${file} should contain ${JSON.stringify(from)} exactly once`).toBe(1)
  writeFileSync(path, text.replace(from, to))
}

describe("the contract types the engine", () => {
  let dir: string
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "sokoni-drift-"))
    // The engine and what it imports (the CLI loads the scenario runner, which loads the contract validator).
    for (const folder of ["engine", "scenarios", "spec"])
      cpSync(join(ROOT, folder), join(dir, folder), { recursive: true, filter: (source) => !source.includes("node_modules") })
    symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"))
    const config = JSON.parse(readFileSync(join(ROOT, "tsconfig.json"), "utf8")) as { include: Array<string> }
    writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ ...config, include: ["engine", "scenarios", "spec"] }))
    writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module" }))
  })
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it("accepts the engine as it is, and refuses an extra field or a missing required one", () => {
    expect(typecheck(dir)).toBe("")

    // A stock item with a field the contract's StockItem does not have.
    edit(dir, "engine/app/market.ts", "    listingStatus: instrument.listingStatus,\n", "    listingStatus: instrument.listingStatus,\n    bogusField: 1,\n")
    // An order without settlementStatus, which the contract's Order requires.
    edit(dir, "engine/domain/order-wire.ts", "    settlementStatus: o.settlementStatus,\n", "")
    // The status document without its required version.
    edit(dir, "engine/http/routes/status.ts", '  version: "1",\n', "")

    const output = typecheck(dir)
    expect(output).toMatch(/engine\/app\/market\.ts.*bogusField/)
    expect(output).toMatch(/engine\/domain\/order-wire\.ts.*settlementStatus/)
    expect(output).toMatch(/engine\/http\/routes\/status\.ts.*version/)
    // Two whole typechecks of a scratch copy: seconds when idle, over a minute on a busy machine (a failure bound).
  }, 240_000)
})
