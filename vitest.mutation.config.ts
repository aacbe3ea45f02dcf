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
      exclude: [
        ...configDefaults.exclude,
        "test/contract/typecheck-drift.test.ts",
        // Spawns engine processes and sockets: a mutant lives only inside the test runner, so these cannot kill one.
        "test/http/node-server.process.test.ts",
        "test/conform/webhooks-check.process.test.ts",
        "test/cli/serve-bundle.process.test.ts",
        "test/contract/prism.test.ts",
        "test/contract/coverage-of-spec.test.ts",
        "test/guards/**",
        "test/ci/**",
        // Spawns k6 and engine processes.
        "test/load/**",
        // Pact's verifier drives the engine from its Rust core; slow per mutant and adds nothing the HTTP tests lack.
        "contracts/**"
      ]
    }
  })
)
