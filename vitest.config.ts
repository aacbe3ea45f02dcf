import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "contracts/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Each file builds its own engine; two workers keep CI within the machine's two cores.
    maxWorkers: 2
  }
})
