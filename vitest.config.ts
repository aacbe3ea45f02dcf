import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "contracts/**/*.test.ts"],
    // Failure bounds, not expectations of speed: a passing test returns long before them on any machine.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Each file builds its own engine; two workers keep CI within the machine's two cores.
    maxWorkers: 2,
    // One module graph per worker, imported by Node itself (Node 24 strips the types): importing the engine and
    // effect anew for every file through Vite's module runner was two thirds of the suite's time (E-279). Every
    // file builds its own engines and stores, so sharing modules shares no state; the mutation config already ran
    // every file this way.
    isolate: false,
    experimental: { viteModuleRunner: false, nodeLoader: false },
    // The reporter lists a passing test by name only when it is slow. A test that starts an engine takes 300 ms
    // (vitest's default threshold) or more on this two-core machine under load, which listed about 140 tests in every
    // green run; the tests that take 5 s or more (the model, property and conformance runs) are still listed.
    slowTestThreshold: 5_000,
    tags: [
      {
        name: "postgres",
        description: "needs DATABASE_URL (an admin URL; the test creates and drops its own database): the PostgreSQL pass runs these"
      }
    ],
    // Pact's core (the consumer tests' mock servers) sends anonymous usage events unless told not to, and prints a
    // notice saying so; the provider verifications' child processes inherit it (contracts/verify.ts sets it too).
    env: { PACT_DO_NOT_TRACK: "true" }
  }
})
