#!/usr/bin/env node
// @ts-check
/**
 * The `sokoni` bin (package.json "bin"), plain JavaScript because Node refuses to strip the types of any file under
 * node_modules (ERR_UNSUPPORTED_NODE_MODULES_TYPE_STRIPPING). In a checkout it runs the sources (or serve's fresh
 * bundle, E-260). In an installed package (its real path under node_modules, or no sources
 * beside it: the tarball ships none) it runs dist/cli/, the bundle of the whole command line that `npm pack` builds
 * (scripts/build-package.ts, E-330). In a checkout it is also what bin.ts runs, so both start the same way.
 */
import { existsSync } from "node:fs"
import nodeModule from "node:module"
import { sep } from "node:path"

// The engine needs Node 24 (package.json "engines", which npm only warns about): on an older Node, say so in one
// line rather than fail on the first API it lacks. `node:module` is imported whole, not `{ enableCompileCache }`, so
// that this module still links on a Node without that function and the check gets to run.
const major = Number(process.versions.node.split(".")[0])
if (major < 24) {
  console.error(`sokoni needs Node.js 24 or newer; this is Node.js ${process.versions.node} (${process.execPath})`)
  process.exit(1)
}
const sources = new URL("./bin.ts", import.meta.url)
// Node runs a bin by its real path (npm's .bin entry is a symlink), so this is where the package really lives.
const installed = import.meta.filename.split(sep).includes("node_modules") || !existsSync(sources)
if (installed) {
  // What bin.ts does first in a checkout: start-up reuses the compiled code of earlier runs (E-261).
  nodeModule.enableCompileCache()
  // A URL, not a literal: the bundle exists only in a built package, so tsc has nothing to resolve.
  await import(new URL("../../dist/cli/main.js", import.meta.url).href)
} else {
  // Node's compile cache first (E-261), then the young generation's cap before anything allocates (E-358), then the
  // module for this command line: serve's fresh bundle or the sources (E-260). Plain JavaScript up to the bundle, so
  // a warm `sokoni serve` loads no TypeScript and Node never loads its type stripper (about 50 to 100 ms; E-531).
  nodeModule.enableCompileCache()
  const args = process.argv.slice(2)
  const { capYoungGeneration, youngGenerationCapOf } = await import("./young-generation.js")
  capYoungGeneration(youngGenerationCapOf(args))
  const { cliModule } = await import("./bundle.js")
  await import(cliModule(args, process.env))
}
