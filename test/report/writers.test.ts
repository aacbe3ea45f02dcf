/**
 * The report writers over one hand-made run (independent of any checker): JUnit parses as XML with the run's counts,
 * CTRF carries the fields its schema requires, the HTML page escapes whatever a check's text holds and inlines its
 * style; writeReports puts the three files in a directory it creates.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Ajv } from "ajv"
import { XMLParser, XMLValidator } from "fast-xml-parser"
import { afterAll, describe, expect, it } from "vitest"
import { toCtrf } from "../../engine/report/ctrf.ts"
import { htmlEscape, toHtml } from "../../engine/report/html.ts"
import { toJUnit, xmlEscape } from "../../engine/report/junit.ts"
import type { CheckResult, RunReport } from "../../engine/report/model.ts"
import { REPORT_FILES, writeReports } from "../../engine/report/write.ts"

const SCRIPT = `<script>alert("x")</script>`

const check = (over: Partial<CheckResult> & Pick<CheckResult, "name" | "status">): CheckResult => ({ suite: "receiver", durationMs: 12, ...over })

const report: RunReport = {
  tool: "sokoni webhooks check --url http://127.0.0.1:9/hook --seed 7",
  seed: 7,
  target: "http://127.0.0.1:9/hook",
  startedAt: "2026-01-05T09:30:00.000Z",
  finishedAt: "2026-01-05T09:30:02.500Z",
  checks: [
    check({ name: "accepts a signed delivery", status: "passed", score: 2, maxScore: 2 }),
    check({
      name: "rejects a wrong signature",
      status: "failed",
      score: 0,
      maxScore: 2,
      message: `answered 200 & kept it: ${SCRIPT}`,
      reproducer: `curl -X POST 'http://127.0.0.1:9/hook' --data-binary '{"a":"<b>"}'`,
      replay: "npx sokoni webhooks check --seed 7",
      timeline: [{ at: "2026-01-05T09:30:01.000Z", kind: "delivery", text: `POST ${SCRIPT} -> 200` }]
    }),
    check({ suite: "orders", operation: "createOrder", name: "skips without a key", status: "skipped", message: "no sandbox key" }),
    check({ suite: "orders", operation: "createOrder", name: `quote "reused" <refused>`, status: "failed", message: "got 200\u0001" })
  ]
}

describe("JUnit XML", () => {
  const xml = toJUnit(report)

  it("is well-formed XML whatever the checks' text holds", () => {
    expect(XMLValidator.validate(xml)).toBe(true)
  })

  it("counts tests, failures and skips per run and per suite", () => {
    const doc = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: "", isArray: (name) => ["testsuite", "testcase"].includes(name) }).parse(xml)
    const root = doc.testsuites
    expect([root.tests, root.failures, root.skipped]).toEqual(["4", "2", "1"])
    const suites = root.testsuite as Array<Record<string, unknown> & { testcase: Array<Record<string, unknown>> }>
    expect(suites.map((s) => [s.name, s.tests, s.failures, s.skipped])).toEqual([
      ["receiver", "2", "1", "0"],
      ["orders", "2", "1", "1"]
    ])
    const cases = suites.flatMap((s) => s.testcase)
    expect(cases).toHaveLength(4)
    expect(cases.filter((c) => c.failure !== undefined)).toHaveLength(2)
    expect(cases.filter((c) => c.skipped !== undefined)).toHaveLength(1)
    expect(cases[3]?.name).toBe(`quote "reused" <refused>`)
    expect(cases[3]?.classname).toBe("createOrder")
  })

  it("puts message, score, reproducer, replay and timeline in the failure", () => {
    const failure = xml.slice(xml.indexOf("<failure"), xml.indexOf("</failure>"))
    for (const text of ["score 0/2", "reproduce: curl", "replay: npx sokoni webhooks check --seed 7", "2026-01-05T09:30:01.000Z delivery"]) {
      expect(failure).toContain(xmlEscape(text))
    }
    expect(failure).not.toContain("<script>")
  })

  it("escapes the five XML characters and drops control characters", () => {
    expect(xmlEscape(`<a href="x">'&'</a>\u0001`)).toBe("&lt;a href=&quot;x&quot;&gt;&apos;&amp;&apos;&lt;/a&gt;")
  })
})

/** The fields the CTRF schema (ctrf.io, schema/ctrf.schema.json) requires, with its closed objects closed. */
const CTRF_REQUIRED = {
  type: "object",
  required: ["reportFormat", "specVersion", "results"],
  properties: {
    reportFormat: { const: "CTRF" },
    specVersion: { type: "string", pattern: "^[0-9]+\\.[0-9]+\\.[0-9]+$" },
    results: {
      type: "object",
      required: ["tool", "summary", "tests"],
      properties: {
        tool: {
          type: "object",
          required: ["name"],
          properties: { name: { type: "string", minLength: 1 }, version: { type: "string" }, extra: { type: "object" } },
          additionalProperties: false
        },
        summary: {
          type: "object",
          required: ["tests", "passed", "failed", "skipped", "pending", "other", "start", "stop"],
          properties: Object.fromEntries(
            ["tests", "passed", "failed", "skipped", "pending", "other", "flaky", "suites", "start", "stop", "duration"].map((k) => [k, { type: "integer" }])
          ),
          additionalProperties: { type: "object" }
        },
        tests: {
          type: "array",
          items: {
            type: "object",
            required: ["name", "status", "duration"],
            properties: {
              name: { type: "string", minLength: 1 },
              status: { enum: ["passed", "failed", "skipped", "pending", "other"] },
              duration: { type: "integer" },
              suite: { type: "array", minItems: 1, items: { type: "string" } },
              message: { type: "string" },
              trace: { type: "string" },
              stdout: { type: "array", items: { type: "string" } },
              extra: { type: "object" }
            }
          }
        }
      }
    }
  }
}

describe("CTRF JSON", () => {
  const ctrf = JSON.parse(JSON.stringify(toCtrf(report)))

  it("validates against the schema's required fields", () => {
    const validate = new Ajv({ strict: false, allErrors: true }).compile(CTRF_REQUIRED)
    expect(validate(ctrf), JSON.stringify(validate.errors)).toBe(true)
  })

  it("summarises the run: counts, epoch start and stop, score", () => {
    expect(ctrf.results.summary).toMatchObject({ tests: 4, passed: 1, failed: 2, skipped: 1, pending: 0, other: 0, suites: 2 })
    expect(ctrf.results.summary.start).toBe(Date.UTC(2026, 0, 5, 9, 30, 0))
    expect(ctrf.results.summary.stop - ctrf.results.summary.start).toBe(2500)
    expect(ctrf.results.summary.extra).toEqual({ score: 2, maxScore: 4 })
    expect(ctrf.results.tool.name).toBe("sokoni webhooks check")
  })

  it("keeps per test its message, timeline, reproducer and score", () => {
    const failed = ctrf.results.tests[1]
    expect(failed).toMatchObject({ name: "rejects a wrong signature", status: "failed", duration: 12, suite: ["receiver"] })
    expect(failed.message).toContain(SCRIPT)
    expect(failed.stdout).toEqual([`2026-01-05T09:30:01.000Z delivery POST ${SCRIPT} -> 200`])
    expect(failed.extra).toMatchObject({ score: 0, maxScore: 2, replay: "npx sokoni webhooks check --seed 7" })
    expect(ctrf.results.tests[2].extra).toEqual({ operation: "createOrder" })
  })
})

describe("HTML page", () => {
  const html = toHtml(report)

  it("escapes a <script> wherever a check's text puts it", () => {
    expect(html).not.toContain("<script")
    expect(html.split(htmlEscape(SCRIPT)).length - 1).toBe(2) // in the message and in the timeline row
    expect(html).toContain(htmlEscape(`quote "reused" <refused>`))
  })

  it("is self-contained: inline style, no external reference", () => {
    expect(html).toContain("<style>")
    expect(html).not.toMatch(/<link|src=|@import|url\(/i)
  })

  it("shows totals, score, the table of checks and per check its details", () => {
    expect(html).toContain("1 passed")
    expect(html).toContain("2 failed")
    expect(html).toContain("1 skipped")
    expect(html).toContain("score 2/4")
    expect(html.match(/<tr><td>/g)?.length).toBe(4 + 1) // four checks, one timeline row
    expect(html).toContain(htmlEscape(`curl -X POST 'http://127.0.0.1:9/hook' --data-binary '{"a":"<b>"}'`))
    expect(html).toContain("npx sokoni webhooks check --seed 7")
    expect(html).toContain('<td class="status failed">failed</td>')
  })

  it("escapes the characters that open tags and attributes", () => {
    expect(htmlEscape(`<a title='x' href="y">&</a>`)).toBe("&lt;a title=&#39;x&#39; href=&quot;y&quot;&gt;&amp;&lt;/a&gt;")
  })
})

describe("writeReports", () => {
  const dirs: Array<string> = []
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true })
  })

  it("writes the three files into a directory it creates", async () => {
    const base = await mkdtemp(join(tmpdir(), "sokoni-report-"))
    dirs.push(base)
    const dir = join(base, "nested", "out")
    const paths = await writeReports(report, dir)
    expect(paths).toEqual([join(dir, REPORT_FILES.junit), join(dir, REPORT_FILES.ctrf), join(dir, REPORT_FILES.html)])
    expect(await readFile(paths[0] ?? "", "utf8")).toBe(toJUnit(report))
    expect(JSON.parse(await readFile(paths[1] ?? "", "utf8"))).toEqual(JSON.parse(JSON.stringify(toCtrf(report))))
    expect(await readFile(paths[2] ?? "", "utf8")).toBe(toHtml(report))
  })
})

describe("HTML coverage", () => {
  it("shows operations by check status and the transitions seen, escaped, before the checks table", () => {
    const html = toHtml({
      ...report,
      coverage: {
        operations: [
          { operation: "placeTrade", passed: 3, failed: 1, skipped: 0 },
          { operation: "getWallet<x>", passed: 0, failed: 0, skipped: 0 }
        ],
        transitions: [
          { machine: "order", transition: "PENDING -> FILLED", event: "order.filled", seen: true },
          { machine: "KYC", transition: "status asserted", event: "kyc.updated", seen: false }
        ]
      }
    })
    expect(html).toContain("1 of 2 operations checked, 0 with every check passed; 1 of 2 order, KYC and wallet transitions seen")
    expect(html).toContain('<tr><td>placeTrade</td><td class="status failed">3</td><td>1</td><td>0</td></tr>')
    expect(html).toContain("getWallet&lt;x&gt;")
    expect(html).toContain('<td>PENDING -&gt; FILLED</td><td>order.filled</td><td class="status passed">seen</td>')
    expect(html.indexOf("<h2>Coverage</h2>")).toBeLessThan(html.indexOf("<h2>Checks</h2>"))
    expect(toHtml(report)).not.toContain("<h2>Coverage</h2>")
  })
})
