/**
 * ReceiverScripts: the control API's hold on the engine's simulated webhook receivers (`PUT /_sim/receivers`,
 * `POST /_sim/receivers/take`, D-350). Scripting checks what the body's schema cannot (an answer that is both
 * unreachable and a status, a partner that does not exist); taking returns the views (sim/received-view.ts) of what
 * the receivers got and forgets them.
 * Owns those two use cases. Does not own the receivers' behaviour (sim/outbound.ts) nor the wire decoding (route).
 */
import { Context, Effect, Layer, Option } from "effect"
import { type ApiFailure, fail } from "../domain/errors.ts"
import { Receivers, type ScriptedAnswer } from "../sim/outbound.ts"
import { type ReceivedView, receivedView } from "../sim/received-view.ts"
import { Store, type StoreError } from "../store/port.ts"
import { Partners } from "./docs.ts"

export interface ReceiverScriptInput {
  readonly url: string
  readonly partnerId?: string | undefined
  readonly secret?: string | undefined
  readonly answers?: ReadonlyArray<ScriptedAnswer> | undefined
  readonly otherwise?: ScriptedAnswer | undefined
}

/** An answer as the wire shows it: only the keys that were set. */
export interface WireAnswer {
  status?: number
  latencyMs?: number
  unreachable?: boolean
}

export interface ReceiverScriptSet {
  readonly url: string
  readonly partnerId: string | null
  readonly checksSignatures: boolean
  readonly answers: Array<WireAnswer>
  readonly otherwise: WireAnswer
}

/** An answer is a status after a latency, or no connection: not both. */
const answerProblem = (answer: ScriptedAnswer, at: string): ApiFailure | undefined =>
  answer.unreachable === true && (answer.status !== undefined || answer.latencyMs !== undefined)
    ? fail("VALIDATION_ERROR", `${at}: an unreachable answer has no status nor latency`, { param: at })
    : undefined

/** The answer as given, without keys left undefined (the wire shows only what was set). */
const wireAnswer = (a: ScriptedAnswer): WireAnswer => ({
  ...(a.status === undefined ? {} : { status: a.status }),
  ...(a.latencyMs === undefined ? {} : { latencyMs: a.latencyMs }),
  ...(a.unreachable === undefined ? {} : { unreachable: a.unreachable })
})

export class ReceiverScripts extends Context.Service<
  ReceiverScripts,
  {
    readonly script: (input: ReceiverScriptInput) => Effect.Effect<ReceiverScriptSet, ApiFailure | StoreError>
    readonly take: (partnerId: string | undefined) => Effect.Effect<{ received: Array<ReceivedView> }>
  }
>()("sokoni/ReceiverScripts") {
  static readonly make = Effect.gen(function* () {
    const { receivers } = yield* Receivers
    const store = yield* Store

    const script = Effect.fn("ReceiverScripts.script")(function* (input: ReceiverScriptInput) {
      let url: URL | undefined
      try {
        url = new URL(input.url)
      } catch {
        url = undefined
      }
      if (url === undefined || (url.protocol !== "http:" && url.protocol !== "https:"))
        return yield* fail("VALIDATION_ERROR", "`url` must be an absolute http or https URL", { param: "url" })
      const answers = input.answers ?? []
      const otherwise = input.otherwise ?? { status: 200 }
      for (const [i, answer] of answers.entries()) {
        const problem = answerProblem(answer, `answers[${i}]`)
        if (problem !== undefined) return yield* problem
      }
      const otherwiseProblem = answerProblem(otherwise, "otherwise")
      if (otherwiseProblem !== undefined) return yield* otherwiseProblem
      const partnerId = input.partnerId
      if (partnerId !== undefined && Option.isNone(yield* store.read((tx) => Partners.get(tx, partnerId))))
        return yield* fail("NOT_FOUND", `partner ${partnerId} was not found`)
      receivers.script(input.url, answers.map(wireAnswer), wireAnswer(otherwise), { partnerId, secret: input.secret })
      return {
        url: input.url,
        partnerId: partnerId ?? null,
        checksSignatures: input.secret !== undefined,
        answers: answers.map(wireAnswer),
        otherwise: wireAnswer(otherwise)
      }
    })

    const take = (partnerId: string | undefined) => Effect.sync(() => ({ received: receivers.take(partnerId).map((r) => receivedView(r)) }))

    return ReceiverScripts.of({ script, take })
  })

  static readonly layer = Layer.effect(ReceiverScripts, ReceiverScripts.make)
}
