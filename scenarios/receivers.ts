/**
 * A scenario's webhook receivers, wherever they live: in-process the engine's SimReceivers directly (the trace stays
 * byte-identical); over the wire the control API's, scripted for the scenario's partner only (E-241).
 */
import type { ScriptedAnswer, SimReceivers } from "../engine/sim/outbound.ts"
import { type ReceivedView, receivedView } from "../engine/sim/received-view.ts"

/** Script one receiver by URL; take what the receivers got since the last take. */
export interface ScenarioReceivers {
  /** Problems when the script was refused (none when it is in force). */
  readonly script: (url: string, answers: ReadonlyArray<ScriptedAnswer>, otherwise: ScriptedAnswer, secret: string | undefined) => Promise<Array<string>>
  readonly take: () => Promise<Array<ReceivedView>>
}

export const inProcessReceivers = (receivers: SimReceivers): ScenarioReceivers => ({
  script: async (url, answers, otherwise, secret) => {
    receivers.script(url, answers, otherwise, { secret })
    return []
  },
  take: async () => receivers.take().map((r) => receivedView(r))
})

/** A control-API call: its status and decoded body. */
type ControlCall = (method: string, path: string, body: unknown) => Promise<{ readonly status: number; readonly body: unknown }>

/** The control API's receivers (`PUT /_sim/receivers`, `POST /_sim/receivers/take`) for the partner `partnerId` names. */
export const controlReceivers = (admin: ControlCall, partnerId: () => string): ScenarioReceivers => ({
  script: async (url, answers, otherwise, secret) => {
    const body = { url, partnerId: partnerId(), answers, otherwise, ...(secret === undefined ? {} : { secret }) }
    const set = await admin("PUT", "/_sim/receivers", body)
    return set.status === 200 ? [] : [`receiver: PUT /_sim/receivers answered ${set.status} ${JSON.stringify(set.body)}`]
  },
  take: async () => {
    const got = await admin("POST", "/_sim/receivers/take", { partnerId: partnerId() })
    return got.status === 200 ? (got.body as { received: Array<ReceivedView> }).received : []
  }
})
