#!/usr/bin/env node
/**
 * Entry of the `sokoni` command. Turns on Node's compile cache before anything else loads (imports are hoisted, so
 * the CLI itself comes in through a dynamic import), which roughly halves start-up after the first run.
 */
import { enableCompileCache } from "node:module"

enableCompileCache()
await import("./main.ts")
