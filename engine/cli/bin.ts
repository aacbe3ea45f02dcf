#!/usr/bin/env node
/**
 * Entry of the `sokoni` command. Turns on Node's compile cache before anything else loads (imports are hoisted, so
 * the rest comes in through dynamic imports), which roughly halves start-up after the first run. `sokoni serve`
 * then runs the bundled serve (dist/serve/, `npm run build:serve`) when it is fresh, which halves it again; every
 * other command, and serve without a fresh bundle, runs from the sources (engine/cli/bundle.ts decides).
 */
import { enableCompileCache } from "node:module"

enableCompileCache()
// Before anything else allocates: V8 never shrinks a young generation once grown (young-generation.ts, E-358).
const { capYoungGeneration, youngGenerationCapOf } = await import("./young-generation.ts")
capYoungGeneration(youngGenerationCapOf(process.argv.slice(2)))
const { cliModule } = await import("./bundle.ts")
await import(cliModule(process.argv.slice(2), process.env))
