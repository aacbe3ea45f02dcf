/**
 * Reading a Stryker JSON report (fake ones here): scripts/mutation-summary.ts scores per folder and the 80 % gate on
 * engine/app and engine/http; scripts/mutation-survivors.ts lists, per file, what a run did not kill, in source order,
 * each with its source line as changed.
 */
import { describe, expect, it } from "vitest"
import { folderOf, gate, type MutationReport, scores } from "../../scripts/mutation-summary.ts"
import { survivorLines } from "../../scripts/mutation-survivors.ts"

const mutants = (counts: Record<string, number>) => Object.entries(counts).flatMap(([status, n]) => Array.from({ length: n }, () => ({ status }))) as never

const report: MutationReport = {
  files: {
    "engine/app/trading/service.ts": { mutants: mutants({ Killed: 60, Timeout: 2, Survived: 10, NoCoverage: 8, CompileError: 3, Ignored: 4 }) },
    "engine/app/ledger.ts": { mutants: mutants({ Killed: 10 }) },
    "engine/http/routes/orders.ts": { mutants: mutants({ Killed: 8, Survived: 2 }) },
    "engine/http/gateway.ts": { mutants: mutants({ Killed: 70, NoCoverage: 20 }) },
    "engine/domain/money.ts": { mutants: mutants({ Killed: 1, Survived: 1 }) }
  }
}

describe("mutation-summary", () => {
  it("groups files by their top two folders", () => {
    expect(folderOf("engine/http/routes/orders.ts")).toBe("engine/http")
    expect(folderOf("./engine/app/x.ts")).toBe("engine/app")
    expect(folderOf("scripts/x.ts")).toBe("scripts")
  })

  it("scores detected / valid per folder (errors and ignored are not valid)", () => {
    const all = scores(report)
    expect(all.map((s) => [s.folder, s.score])).toEqual([
      ["engine/app", 80],
      ["engine/domain", 50],
      ["engine/http", 78]
    ])
    expect(all[0]).toMatchObject({ killed: 70, timeout: 2, survived: 10, noCoverage: 8, errors: 3 })
  })

  it("gates engine/app and engine/http at the threshold (80 % passes, below fails, missing fails)", () => {
    expect(gate(scores(report), 80)).toEqual(["engine/http: 78.00% is below 80%"])
    expect(gate(scores(report), 75)).toEqual([])
    expect(gate(scores({ files: { "engine/domain/money.ts": report.files["engine/domain/money.ts"]! } }), 80)).toEqual([
      "engine/app: not in the report",
      "engine/http: not in the report"
    ])
  })
})

const mutant = (status: string, line: number, column: number, replacement: string, endColumn?: number) => ({
  status,
  mutatorName: "ConditionalExpression",
  replacement,
  location: { start: { line, column }, ...(endColumn === undefined ? {} : { end: { line, column: endColumn } }) }
})

const listed = {
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

describe("what a run did not kill, listed per file", () => {
  it("lists the Survived and NoCoverage results in source order, each source line as the change makes it, nothing else", () => {
    expect(survivorLines(listed, "engine/app/x.ts")).toEqual([
      "## engine/app/x.ts: 2 not killed",
      'NC 1:11 ConditionalExpression -> "0" | const a = 1',
      "S  2:5 ConditionalExpression | if (true) return"
    ])
  })

  it("says so when the report does not hold the file", () => {
    expect(survivorLines(listed, "engine/app/y.ts")).toEqual(["engine/app/y.ts: not in the report"])
  })
})
