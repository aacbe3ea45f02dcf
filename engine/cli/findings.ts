/**
 * `sokoni findings`: prints what a running engine noticed about its partners' integrations (GET /_sim/findings,
 * E-360), the same text `serve` prints when it stops. Owns its flags and the one HTTP call; the text is
 * findings/report.ts's.
 */
import { Console, Effect, Option } from "effect"
import { Command, Flag } from "effect/cli"
import { type FindingsAnswer, findingsReport } from "../findings/report.ts"
import { usageError } from "./common.ts"

export const findings = Command.make(
  "findings",
  {
    base: Flag.String("base").pipe(Flag.withDefault("http://127.0.0.1:4010"), Flag.withDescription("The engine's origin (default: http://127.0.0.1:4010)")),
    adminToken: Flag.String("admin-token").pipe(
      Flag.optional,
      Flag.withDescription("Bearer token of the engine's /_sim control API, as `serve` printed it (default: $SOKONI_ADMIN_TOKEN)")
    ),
    partnerId: Flag.String("partner-id").pipe(Flag.optional, Flag.withDescription("Only this partner's findings (default: every partner's)")),
    json: Flag.Boolean("json").pipe(Flag.withDefault(false), Flag.withDescription("Print the answer as JSON instead of text (default: text)"))
  },
  Effect.fn("sokoni.findings")(function* (flags) {
    const token = Option.getOrUndefined(flags.adminToken) ?? process.env.SOKONI_ADMIN_TOKEN
    if (token === undefined || token === "") return yield* usageError("give the engine's admin token: --admin-token T, or SOKONI_ADMIN_TOKEN")
    const partner = Option.getOrUndefined(flags.partnerId)
    const url = `${flags.base.replace(/\/+$/, "")}/_sim/findings${partner === undefined ? "" : `?partnerId=${encodeURIComponent(partner)}`}`
    const answer = yield* Effect.tryPromise(async () => {
      const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } })
      return { status: response.status, body: (await response.json()) as unknown }
    }).pipe(Effect.result)
    if (answer._tag === "Failure") {
      yield* Console.error(`sokoni: could not reach ${url}: ${String((answer.failure as Error).cause ?? answer.failure)}`)
      process.exitCode = 1
      return
    }
    const { status, body } = answer.success
    if (status !== 200) {
      const error = (body as { error?: { code?: string; message?: string } }).error
      yield* Console.error(`sokoni: ${url} answered ${status} ${error?.code ?? ""}: ${error?.message ?? ""}`)
      process.exitCode = 1
      return
    }
    if (flags.json) return yield* Console.log(JSON.stringify(body, null, 2))
    for (const line of findingsReport(body as FindingsAnswer)) yield* Console.log(line)
  })
).pipe(Command.withDescription("Print what a running engine noticed about its partners' integrations (dialect differences, faults met)"))

/** The dialect a target engine serves, read from its findings (undefined when it has no control API or says none). */
export const targetDialect = async (base: string, adminToken: string): Promise<string | undefined> => {
  try {
    const response = await fetch(`${base.replace(/\/+$/, "")}/_sim/findings`, { headers: { authorization: `Bearer ${adminToken}` } })
    if (response.status !== 200) return undefined
    const body = (await response.json()) as { dialect?: unknown }
    return typeof body.dialect === "string" ? body.dialect : undefined
  } catch {
    return undefined
  }
}
