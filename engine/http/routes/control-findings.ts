/**
 * Control route of the findings (spec/control.yaml, tag "Findings", E-360): what the engine noticed about the
 * partners' integrations. Decoding only; the list is the Findings service's.
 */
import { Effect } from "effect"
import { Findings } from "../../findings/findings.ts"
import { optional, text } from "../query.ts"
import { controlRoute } from "../route.ts"

export const findingsControlRoutes = [
  controlRoute("getSimFindings", 200, {
    query: { partnerId: optional(text) },
    handle: ({ query }) =>
      Findings.use((f) => Effect.map(f.list(query.partnerId), (l) => ({ findings: l.findings.map((x) => ({ ...x })), dropped: l.dropped })))
  })
]
