/**
 * What several `sokoni` commands share: the --store, --database-url and --seed flags and the usage-error line.
 * Owns nothing else; each command's own flags live with the command.
 */
import { Console, Effect, Option } from "effect"
import { Flag } from "effect/cli"

export const storeFlag = Flag.Literals("store", ["memory", "postgres"]).pipe(
  Flag.withDescription("Where state lives: memory (embedded) or postgres (default: memory)"),
  Flag.withDefault("memory" as const)
)
export const databaseUrlFlag = Flag.String("database-url").pipe(
  Flag.withDescription("PostgreSQL URL for --store postgres (default: $DATABASE_URL)"),
  Flag.optional
)
export const seedFlag = Flag.Int("seed").pipe(
  Flag.withDescription("Seed of every random choice (ids, prices, desk); printed first so a run can be replayed (default: a fresh one)"),
  Flag.optional
)

/** A wrong or missing flag: one line on stderr and exit code 2. */
export const usageError = (message: string) =>
  Console.error(`sokoni: ${message}`).pipe(Effect.andThen(Effect.sync(() => (process.exitCode = 2))), Effect.asVoid)

export const databaseUrlOf = (flag: Option.Option<string>) => Option.getOrUndefined(flag) ?? process.env.DATABASE_URL
