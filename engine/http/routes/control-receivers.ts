/**
 * Control routes of the simulated webhook receivers (spec/control.yaml, tag "Receivers", D-350): script the
 * receiver standing for a webhook URL, take what the receivers got. Decoding only; the work is ReceiverScripts'.
 */
import { Schema } from "effect"
import { ReceiverScripts } from "../../app/receiver-scripts.ts"
import { controlRoute } from "../route.ts"
import { maxCharacters, minCharacters } from "../body.ts"

const Answer = Schema.Struct({
  status: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 100, maximum: 599 }))),
  latencyMs: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 86_400_000 }))),
  unreachable: Schema.optionalKey(Schema.Boolean)
})
const ScriptBody = Schema.Struct({
  url: Schema.String.check(minCharacters(1), maxCharacters(2048)),
  partnerId: Schema.optionalKey(Schema.String.check(minCharacters(1))),
  secret: Schema.optionalKey(Schema.String.check(minCharacters(1), maxCharacters(200))),
  answers: Schema.optionalKey(Schema.Array(Answer).check(Schema.isMaxLength(100))),
  otherwise: Schema.optionalKey(Answer)
})
const TakeBody = Schema.Struct({ partnerId: Schema.optionalKey(Schema.String.check(minCharacters(1))) })

export const receiverControlRoutes = [
  controlRoute("setSimReceiver", 200, {
    body: ScriptBody,
    handle: ({ body }) => ReceiverScripts.use((r) => r.script(body))
  }),
  controlRoute("takeSimReceived", 200, {
    body: TakeBody,
    handle: ({ body }) => ReceiverScripts.use((r) => r.take(body.partnerId))
  })
]
