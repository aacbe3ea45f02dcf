/**
 * The vitest config StrykerJS runs (stryker.config.mjs): the project's config without the tests that cannot kill a
 * mutant of engine code in-process. They spawn processes on copies of the tree (tsc on a scratch copy, which the
 * instrumenter's `@ts-nocheck` would defeat; Prism; redocly) or scan sources (the determinism guard would read
 * instrumented code).
 */
import { configDefaults, defineConfig, mergeConfig } from "vitest/config"
import base from "./vitest.config.ts"

export default mergeConfig(
  base,
  defineConfig({
    test: {
      // One module graph for every test file of a run: importing the engine and effect anew per file was 70% of a
      // mutant's time (8 HTTP test files: 31 s isolated, 6 s shared). Mutants are switched by a runtime flag, so
      // sharing modules cannot leak one mutant into another.
      isolate: false,
      // Stryker's vitest runner instruments and switches mutants through Vite's module runner, as it was measured
      // with; the project's config loads modules with Node's own loader instead (E-279).
      experimental: { viteModuleRunner: true },
      // A mutant that makes a request hang fails its test here within 15 s, instead of waiting out Stryker's timeout
      // for every test that covers it (minutes, for gateway code) and restarting the worker (E-276). Under mutation
      // the model tests run 30 sequences: no test takes 5 s.
      testTimeout: 15_000,
      hookTimeout: 30_000,
      exclude: [
        ...configDefaults.exclude,
        "test/contract/typecheck-drift.test.ts",
        // Spawns engine processes and sockets: a mutant lives only inside the test runner, so these cannot kill one.
        "**/*.process.test.ts",
        // Spawn Prism: they check the harness against a mock, not engine code.
        "test/contract/prism.test.ts",
        "test/conform/conform-prism.test.ts",
        "test/contract/coverage-of-spec.test.ts",
        "test/guards/**",
        "test/ci/**",
        // Drives engine processes in real time (the load profiles).
        "test/load/**",
        // Pact's verifier drives the engine from its Rust core; slow per mutant and adds nothing the HTTP tests lack.
        "contracts/**",
        // Every scenario file again, over a socket through the conform harness: the same files run in-process in
        // test/scenarios/*.test.ts. A quarter of the time of a surviving gateway mutant, and it checks the harness
        // (engine/conform, not mutated) more than the engine (E-276).
        "test/conform/conform-scenarios.test.ts"
      ]
    }
  })
)
