import { defineConfig } from "vitest/config"
import { BaseSequencer, type TestSpecification } from "vitest/node"

/**
 * Files that spend their time waiting on the wall clock or on other processes (the tier profiles' rate-limit
 * windows, the tests that spawn `sokoni`) start first, so their waiting overlaps the CPU-bound files instead of being
 * the run's tail on an otherwise idle core; the rest keep vitest's order (slowest or largest first).
 */
const waitsOnTheWorld = (spec: TestSpecification) => /\/test\/load\/|\.process\.test\.ts$/.test(spec.moduleId)
class WaitersFirst extends BaseSequencer {
  override async sort(files: Array<TestSpecification>) {
    const sorted = await super.sort(files)
    return [...sorted.filter(waitsOnTheWorld), ...sorted.filter((spec) => !waitsOnTheWorld(spec))]
  }
}

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "contracts/**/*.test.ts"],
    // Failure bounds, not expectations of speed: a passing test returns long before them on any machine.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Each file builds its own engine. Three workers on the machine's two cores: many files wait on sockets, child
    // processes, PostgreSQL or the tier profiles' windows, and a third worker fills that time (the memory pass, idle: 184 s with two
    // workers, 128 s with three; docs/performance.md, "CI and the test suite").
    maxWorkers: 3,
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
    sequence: { sequencer: WaitersFirst },
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
