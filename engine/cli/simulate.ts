/**
 * `sokoni simulate --seed N [--partners P --sub-accounts S --orders O --days D]`: a trading week generated from the
 * seed, run in-process on the engine's virtual clock, judged by the history checker and the ledger's conservation
 * (engine/sim/week). Prints the seed first, progress every few seconds of wall time on a long run, then simulated
 * seconds per wall second, orders, events, deliveries and retries; a failure prints the command that replays it.
 * Owns the flags and what is printed.
 */
import { writeFileSync } from "node:fs"
import { Console, Effect, Option } from "effect"
import { Command, Flag } from "effect/cli"
import { databaseUrlFlag, databaseUrlOf, seedFlag, storeFlag, usageError } from "./common.ts"
import { freshSeed } from "../sim/random.ts"
import { wallClockNow } from "../sim/clock.ts"

/** Progress lines are at least this far apart in wall time. */
const PROGRESS_EVERY_MS = 3_000

const count = (name: string, fallback: number, description: string) =>
  Flag.Int(name).pipe(Flag.withDescription(`${description} (default: ${fallback.toLocaleString("en")})`), Flag.withDefault(fallback))

const cpuMs = () => {
  const used = process.cpuUsage()
  return (used.user + used.system) / 1000
}

export const simulate = Command.make(
  "simulate",
  {
    seed: seedFlag,
    partners: count("partners", 10, "Partners trading"),
    subAccounts: count("sub-accounts", 1_000, "Sub-accounts, spread over the partners"),
    orders: count("orders", 10_000, "Orders placed through quotes over the week"),
    days: count("days", 5, "Trading days, Monday on"),
    store: storeFlag,
    databaseUrl: databaseUrlFlag,
    history: Flag.String("history").pipe(Flag.optional, Flag.withDescription("Also write the run's history (JSON lines) here, for `sokoni history check`"))
  },
  Effect.fn("sokoni.simulate")(function* (flags) {
    const seed = Option.getOrElse(flags.seed, freshSeed)
    yield* Console.log(`seed ${seed}`)
    const { partners, subAccounts, orders, days } = flags
    if (partners < 1 || subAccounts < partners || orders < 0 || days < 1 || days > 20)
      return yield* usageError("--partners >= 1, --sub-accounts >= --partners, --orders >= 0 and --days from 1 to 20")
    yield* Console.log(`a week of ${partners} partners, ${subAccounts} sub-accounts, ${orders} orders over ${days} trading days (store ${flags.store})`)
    const { runWeek } = yield* Effect.promise(() => import("../sim/week/run.ts"))
    const historyFile = Option.getOrUndefined(flags.history)
    const startWall = wallClockNow()
    const startCpu = cpuMs()
    let lastProgress = startWall
    const result = yield* Effect.promise(() =>
      runWeek({
        seed,
        partners,
        subAccounts,
        orders,
        days,
        store: flags.store,
        databaseUrl: databaseUrlOf(flags.databaseUrl),
        keepHistory: historyFile !== undefined,
        onProgress: (p) => {
          const now = wallClockNow()
          if (now - lastProgress < PROGRESS_EVERY_MS) return
          lastProgress = now
          const at = new Date(p.now).toISOString().slice(0, 16).replace("T", " ")
          console.log(
            `  ${p.done.toLocaleString("en")}/${p.total.toLocaleString("en")} actions, engine clock ${at} UTC, ${((now - startWall) / 1000).toFixed(1)} s`
          )
        }
      })
    )
    const wallSeconds = (wallClockNow() - startWall) / 1000
    const cpuSeconds = (cpuMs() - startCpu) / 1000
    const s = result.summary
    yield* Console.log(
      `simulated ${(s.simulatedMs / 3_600_000).toFixed(1)} h in ${wallSeconds.toFixed(2)} s wall (${cpuSeconds.toFixed(2)} s CPU): ${Math.round(s.simulatedMs / 1000 / wallSeconds).toLocaleString("en")} simulated seconds per wall second`
    )
    yield* Console.log(
      `orders: ${s.ordersPlaced.toLocaleString("en")} placed, ${s.ordersRefused.toLocaleString("en")} refused; requests ${s.requests.toLocaleString("en")}`
    )
    yield* Console.log(
      `events ${s.events.toLocaleString("en")}; webhook deliveries ${s.deliveries.toLocaleString("en")}, retries ${s.retries.toLocaleString("en")} (${s.received.toLocaleString("en")} reached a receiver)`
    )
    const refusals = Object.entries(s.refusals)
    if (refusals.length > 0) yield* Console.log(`refused: ${refusals.map(([code, n]) => `${code} ${n}`).join(", ")}`)
    yield* Console.log(
      `history: ${s.historyEntries.toLocaleString("en")} entries, ${s.violations.length === 0 ? "every rule holds" : `${s.violations.length} violations`}; money: ${s.conservation.partitions} ledgers conserved${s.conservation.problems.length === 0 ? "" : ` except ${s.conservation.problems.length}`}`
    )
    for (const line of [...s.problems, ...s.violations, ...s.conservation.problems].slice(0, 20)) yield* Console.log(`  FAIL ${line}`)
    if (historyFile !== undefined) {
      writeFileSync(historyFile, (result.history ?? []).map((e) => `${JSON.stringify(e)}\n`).join(""))
      yield* Console.log(`history written to ${historyFile}`)
    }
    yield* Console.log(`trace hash ${s.traceHash} (${s.traceLines.toLocaleString("en")} lines)`)
    if (!result.passed) {
      const sizes = `--partners ${partners} --sub-accounts ${subAccounts} --orders ${orders} --days ${days}`
      yield* Console.log(`replay: npx sokoni simulate --seed ${seed} ${sizes} --store ${flags.store}`)
      process.exitCode = 1
    }
  })
).pipe(Command.withDescription("Run a seeded trading week in-process on the virtual clock and judge its history and money"))
