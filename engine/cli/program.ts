/**
 * The `sokoni` root command and how a command line is run: Node's services, and the exit code of a stopped server.
 * Shared by the whole CLI (main.ts) and the bundled `serve` (serve-main.ts), so both parse and exit the same way.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Cause, Effect, Exit, Runtime } from "effect"
import { Command } from "effect/cli"

export const VERSION = "0.1.0"

export const root = Command.make("sokoni").pipe(
  Command.withDescription("Sokoni: reference engine, deterministic simulator and conformance harness for the Partner Brokerage API")
)

/** Runs a parsed command line (Command.run's effect) as the process's main program. */
export const runCli = <A, E>(cli: Effect.Effect<A, E, Command.Environment>): void =>
  cli.pipe(
    Effect.provide(NodeServices.layer),
    // A server stopped by SIGINT/SIGTERM has finished its in-flight requests and released its pool: that is a clean
    // exit (0), not the 130 Effect's default teardown gives an interrupted program.
    NodeRuntime.runMain({
      teardown: (exit, onExit) => (Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause) ? onExit(0) : Runtime.defaultTeardown(exit, onExit))
    })
  )
