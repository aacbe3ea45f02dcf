import { describe, expect, it } from "vitest"
import { survivorLines } from "../../scripts/mutation-survivors.ts"

const mutant = (status: string, line: number, column: number, replacement: string, endColumn?: number) => ({
  status,
  mutatorName: "ConditionalExpression",
  replacement,
  location: { start: { line, column }, ...(endColumn === undefined ? {} : { end: { line, column: endColumn } }) }
})

const report = {
  files: {
    "engine/app/x.ts": {
      source: "const a = 1\nif (a === 1) return\nconst b = 2",
      mutants: [
        mutant("Survived", 2, 5, "true", 12),
        mutant("Killed", 2, 5, "false"),
        mutant("NoCoverage", 1, 11, "0"),
        mutant("Timeout", 3, 1, "x"),
        mutant("Ignored", 3, 2, "y")
      ]
    }
  }
}

describe("mutation-survivors", () => {
  it("lists survived and uncovered mutants in source order, each line as the mutant changes it, nothing else", () => {
    expect(survivorLines(report, "engine/app/x.ts")).toEqual([
      "## engine/app/x.ts: 2 not killed",
      'NC 1:11 ConditionalExpression -> "0" | const a = 1',
      "S  2:5 ConditionalExpression | if (true) return"
    ])
  })

  it("says so when the report does not hold the file", () => {
    expect(survivorLines(report, "engine/app/y.ts")).toEqual(["engine/app/y.ts: not in the report"])
  })
})
