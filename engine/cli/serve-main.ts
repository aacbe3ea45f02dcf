/**
 * Entry of the bundled `serve` (scripts/build-serve.ts bundles this file into dist/serve/): the `sokoni` command
 * line with `serve` alone, so the bundle holds the engine and nothing of conform, scenarios, load or reports.
 * bin.ts runs it for `sokoni serve` when the bundle is fresh (engine/cli/bundle.ts); otherwise main.ts.
 */
import { Command } from "effect/cli"
import { root, runCli, VERSION } from "./program.ts"
import { serve } from "./serve.ts"

root.pipe(Command.withSubcommands([serve]), Command.run({ version: VERSION }), runCli)
