// The findings (GET /_sim/findings: what clients relied on, or would be refused by the other dialect) and the faults
// (GET /_sim/faults: the plan in force and the faults clients met, with how each answered). Each panel says "not
// available" when the engine answers 404, and falls back to a plain listing when the answer has another shape.
import { badge, clockOnly, fill, h, id, table, time } from "./dom.js"
import { renderGeneric } from "./extras.js"

const byId = (name) => document.getElementById(name)
const unavailable = (target, path) => fill(byId(target), h("p", { class: "empty" }, `Not available: this engine answers 404 to GET ${path}.`))

export const renderFindings = (answer) => {
  if (answer === undefined) return unavailable("findings", "/_sim/findings")
  if (!Array.isArray(answer?.findings)) return renderGeneric("findings", "/_sim/findings", answer, "Findings")
  const rows = answer.findings.map((f) =>
    h(
      "tr",
      {},
      h("td", {}, f.partner === null ? h("span", { class: "muted" }, "—") : id(f.partner)),
      h("td", {}, h("strong", {}, f.kind), h("span", { class: "sub" }, f.operation)),
      h("td", { class: "message" }, f.message),
      h("td", { class: "num" }, f.count),
      h("td", {}, clockOnly(f.lastAt), h("span", { class: "sub" }, f.lastAt.slice(0, 10)))
    )
  )
  const columns = [{ label: "Partner" }, { label: "Kind / operation" }, { label: "Message" }, { label: "Count", class: "num" }, { label: "Last" }]
  const note = h("p", { class: "note" }, `Dialect ${answer.dialect}`, answer.dropped > 0 ? `, ${answer.dropped} dropped` : "")
  fill(byId("findings"), note, table("Findings", columns, rows, "No findings: nothing relied on a leniency or met a fault."))
}

const target = (rule) =>
  [rule.operations?.join(", ") ?? "every operation", rule.partnerId === undefined ? null : `partner ${rule.partnerId}`].filter(Boolean).join(" · ")
const rate = (rule) => (rule.every !== undefined ? `every ${rule.every}` : rule.probability !== undefined ? `p ${rule.probability}` : "always")

const answerOf = (m) =>
  m.answer === null
    ? badge("no retry yet", "neutral")
    : h(
        "span",
        {},
        badge(m.answer.sameKey ? "same key" : "new key", m.answer.sameKey ? "good" : "bad"),
        " ",
        m.answer.honouredRetryAfter === null
          ? null
          : badge(m.answer.honouredRetryAfter ? "waited Retry-After" : "ignored Retry-After", m.answer.honouredRetryAfter ? "good" : "bad")
      )

export const renderFaults = (answer) => {
  if (answer === undefined) return unavailable("faults", "/_sim/faults")
  if (!Array.isArray(answer?.rules) || !Array.isArray(answer?.met)) return renderGeneric("faults", "/_sim/faults", answer, "Faults")
  const rules = answer.rules.map((r) =>
    h(
      "tr",
      {},
      h("td", {}, badge(r.fault, "warn")),
      h("td", { class: "wrap" }, target(r), h("span", { class: "sub" }, rate(r))),
      h("td", { class: "num" }, `${r.injected}/${r.matched}`),
      h("td", {}, r.healsAt === null ? "never" : r.healed ? badge("healed", "good") : time(r.healsAt))
    )
  )
  const met = answer.met
    .slice(-50)
    .reverse()
    .map((m) =>
      h(
        "tr",
        {},
        h("td", {}, clockOnly(m.at)),
        h("td", {}, badge(m.fault, "warn"), h("span", { class: "sub" }, m.operationId)),
        h("td", {}, m.partnerId === null ? "—" : id(m.partnerId)),
        h("td", {}, answerOf(m))
      )
    )
  const plan = answer.seed === null ? "No fault plan (PUT /_sim/faults sets one)." : `Plan set ${time(answer.setAt)}, seed ${answer.seed}`
  fill(
    byId("faults"),
    h("p", { class: "note" }, plan),
    answer.rules.length === 0
      ? null
      : table("Fault rules", [{ label: "Fault" }, { label: "Target" }, { label: "Injected", class: "num" }, { label: "Heals" }], rules, ""),
    table("Faults met", [{ label: "At" }, { label: "Fault" }, { label: "Partner" }, { label: "Client's answer" }], met, "No client has met a fault yet.")
  )
}
