// StrykerJS: mutation testing of the application and HTTP layers (README, "Mutation testing"; docs/decisions.md E-014).
// `npm run mutate`: incremental against docs/mutation/mutation.json (the JSON report doubles as the incremental file:
// Stryker writes the same report to both; commit it).
// `npm run mutate -- --force`: every mutant again. `npm run mutate -- --mutate "engine/domain/**/*.ts"`: other files;
// such a run writes its reports and incremental file under out/mutation/, leaving the committed ones alone.

const partial = process.argv.includes("--mutate") || process.argv.includes("-m")
const reports = partial ? "out/mutation" : "docs/mutation"

// Tests run without PostgreSQL (postgres tests skip themselves): Stryker's workers inherit this process's environment.
delete process.env.DATABASE_URL

/** @type {import("@stryker-mutator/api/core").PartialStrykerOptions} */
export default {
  packageManager: "npm",
  testRunner: "vitest",
  vitest: { configFile: "vitest.mutation.config.ts", related: true },
  mutate: ["engine/app/**/*.ts", "engine/http/**/*.ts"],
  // Stryker copies the project into a sandbox; these need not go (but the example webhook receivers must: the
  // receiver check's tests grade them).
  ignorePatterns: ["out", "docs/mutation", "docs/api", "load", "contracts", "!contracts/examples", "coverage", "spec/dist", "spec/gen", "*.tmp.ts"],
  coverageAnalysis: "perTest",
  // Effect.fn span names are labels, not behaviour (E-273).
  plugins: ["@stryker-mutator/*", "./scripts/stryker/span-name-ignorer.mjs"],
  ignorers: ["span-names"],
  // Test files share one module graph under mutation (vitest.mutation.config.ts), so a mutant in code run once at
  // module load could not be switched on per mutant: such static mutants are left out (E-270).
  ignoreStatic: true,
  concurrency: 2,
  timeoutMS: 10_000,
  incremental: true,
  incrementalFile: `${reports}/mutation.json`,
  reporters: ["clear-text", "progress", "html", "json"],
  htmlReporter: { fileName: `${reports}/index.html` },
  jsonReporter: { fileName: `${reports}/mutation.json` },
  clearTextReporter: { allowColor: false, logTests: false, reportScoreTable: true },
  thresholds: { high: 90, low: 80, break: 80 },
  // Stryker rewrites the tsconfig's extends/references with the TypeScript 5 compiler API, which TypeScript 7 does not
  // ship; ours has neither, so point it at a file that does not exist to skip that step.
  tsconfigFile: "tsconfig.stryker-none.json",
  tempDirName: ".stryker-tmp",
  cleanTempDir: true
}
