/**
 * Control route of the findings (spec/control.yaml, tag "Findings", E-360): what the engine noticed about the
 * partners' integrations. Decoding only; the list is the Findings service's.
 */
import { Effect } from "effect"
import { Findings } from "../../findings/findings.ts"
import { Dialect } from "../dialect.ts"
import { optional, text } from "../query.ts"
import { controlRoute } from "../route.ts"

export const findingsControlRoutes = [
  controlRoute("getSimFindings", 200, {
    query: { partnerId: optional(text) },
    handle: ({ query }) =>
      Effect.gen(function* () {
        const listed = yield* Findings.use((f) => f.list(query.partnerId))
        const dialect = yield* Dialect
        return { dialect: dialect.name, findings: listed.findings.map((x) => ({ ...x })), dropped: listed.dropped }
      })
  })
]
