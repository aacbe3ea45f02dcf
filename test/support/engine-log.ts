/**
 * The engine's log as a test sees it. A test engine logs through `engineLog().logger` (EngineConfig.logger): every
 * line goes on to Effect's default logger, printed as the engine prints it in production, except while a test runs
 * `during(provoke)`: the lines logged meanwhile are captured instead, and returned with provoke's result for the
 * test to assert on.
 *
 * So an error a negative test provokes on purpose is checked (the test fails if it is no longer logged, or if another
 * line comes with it) without reaching the run's output, while any other line, an unexpected ERROR above all, is
 * still printed under the test that logged it.
 */
import { inspect } from "node:util"
import { Cause, Logger } from "effect"

export interface EngineLogLine {
  /** DEBUG, INFO, WARN, ERROR, FATAL. */
  readonly level: string
  /** What the engine passed to Effect.log*, a failure's Cause taken out (it is in `text`). */
  readonly message: ReadonlyArray<unknown>
  /** The line as the default logger writes it, without its time and fiber: level, message, then the cause. */
  readonly text: string
}

const render = (value: unknown) => (typeof value === "string" ? value : inspect(value, { depth: 4, breakLength: Number.POSITIVE_INFINITY }))

export const engineLog = () => {
  let captured: Array<EngineLogLine> | undefined
  const logger = Logger.make<unknown, void>((options) => {
    if (captured === undefined) return Logger.defaultLogger.log(options)
    const message = Array.isArray(options.message) ? [...options.message] : [options.message]
    const parts = [options.logLevel.toUpperCase(), ...message.map(render)]
    if (options.cause.reasons.length > 0) parts.push(Cause.pretty(options.cause))
    captured.push({ level: options.logLevel.toUpperCase(), message, text: parts.join(" ") })
  })
  /** Runs `provoke` with the engine's log captured, not printed: its result, and the lines it logged, in order. */
  const during = async <A>(provoke: () => Promise<A>): Promise<{ readonly value: A; readonly lines: ReadonlyArray<EngineLogLine> }> => {
    if (captured !== undefined) throw new Error("engineLog: during() does not nest")
    const lines: Array<EngineLogLine> = []
    captured = lines
    try {
      return { value: await provoke(), lines }
    } finally {
      captured = undefined
    }
  }
  return { logger, during }
}

export type EngineLog = ReturnType<typeof engineLog>
