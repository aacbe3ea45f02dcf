// The generic listing (an answer of unknown shape: its first list as a table) and the live list of requests.
import { fill, h, table } from "./dom.js"

const MAX_COLUMNS = 6

const cell = (value) => (value === null || value === undefined ? "—" : typeof value === "object" ? JSON.stringify(value) : String(value))

/** The first array in `answer` (itself, or one of its properties), and what else it says. */
const listIn = (answer) => {
  if (Array.isArray(answer)) return { list: answer, rest: {} }
  if (answer === null || typeof answer !== "object") return { list: undefined, rest: answer }
  const key = Object.keys(answer).find((k) => Array.isArray(answer[k]))
  if (key === undefined) return { list: undefined, rest: answer }
  const { [key]: list, ...rest } = answer
  return { list, rest }
}

/** Renders `answer` of `path` into the panel `target`, whatever its shape (the first list in it as a table). */
export const renderGeneric = (target, _path, answer, noun) => {
  const element = document.getElementById(target)
  const { list, rest } = listIn(answer)
  const summary =
    rest !== undefined && typeof rest === "object" && Object.keys(rest).length > 0 ? h("pre", { class: "json" }, JSON.stringify(rest, null, 2)) : null
  if (list === undefined) {
    fill(element, h("pre", { class: "json" }, JSON.stringify(answer, null, 2)))
    return
  }
  const keys = [...new Set(list.flatMap((item) => (item !== null && typeof item === "object" ? Object.keys(item) : ["value"])))].slice(0, MAX_COLUMNS)
  const rows = list.map((item) =>
    h(
      "tr",
      {},
      keys.map((k) => h("td", { class: "wrap" }, cell(item !== null && typeof item === "object" ? item[k] : item)))
    )
  )
  fill(
    element,
    summary,
    table(
      noun,
      keys.map((k) => ({ label: k })),
      rows,
      `No ${noun.toLowerCase()}.`
    )
  )
}

const MAX_REQUESTS = 200

/** Adds one answered request to the live list (newest on top, the oldest dropped past MAX_REQUESTS). */
export const addRequest = (signal, at) => {
  const element = document.getElementById("requests")
  let body = element.querySelector("tbody")
  if (body === null) {
    fill(element, table("Requests", [{ label: "Seen (local)" }, { label: "Method" }, { label: "Path" }, { label: "Status", class: "num" }], [h("tr", {})], ""))
    body = element.querySelector("tbody")
    body.replaceChildren()
  }
  const tone = signal.status < 300 ? "good" : signal.status < 500 ? "warn" : "bad"
  body.prepend(
    h(
      "tr",
      {},
      h("td", { class: "mono" }, at),
      h("td", {}, h("strong", {}, signal.method)),
      h("td", { class: "mono path", title: signal.path }, signal.path),
      h("td", { class: "num" }, h("span", { class: `badge ${tone}` }, signal.status))
    )
  )
  while (body.children.length > MAX_REQUESTS) body.lastElementChild.remove()
}

export const noRequests = () => fill(document.getElementById("requests"), h("p", { class: "empty" }, "Waiting for requests to the engine…"))
