// Building the page's elements without innerHTML: every value shown (names partners chose, event data) is text.

/** An element: `h("td", { class: "num" }, "12")`; attributes starting with "on" are listeners. */
export const h = (tag, attributes = {}, ...children) => {
  const element = document.createElement(tag)
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue
    if (name.startsWith("on")) element.addEventListener(name.slice(2), value)
    else if (value === true) element.setAttribute(name, "")
    else element.setAttribute(name, String(value))
  }
  append(element, children)
  return element
}

const append = (element, children) => {
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue
    element.append(child instanceof Node ? child : document.createTextNode(String(child)))
  }
}

/** Replaces what `element` holds. */
export const fill = (element, ...children) => {
  element.replaceChildren()
  append(element, children)
}

/** A table with a caption for screen readers, a header row and one row per item (or a line saying there is none). */
export const table = (caption, columns, rows, empty) =>
  rows.length === 0
    ? h("p", { class: "empty" }, empty)
    : h(
        "table",
        {},
        h("caption", { class: "sr-only" }, caption),
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            columns.map((c) => h("th", { scope: "col", class: c.class }, c.label))
          )
        ),
        h("tbody", {}, rows)
      )

/** Engine time as the console shows it: date and time of day in UTC, to the second. */
export const time = (iso) => (iso === null || iso === undefined ? "—" : `${iso.slice(0, 10)} ${iso.slice(11, 19)}`)
export const clockOnly = (iso) => (iso === null || iso === undefined ? "—" : iso.slice(11, 19))

/** A coloured status label; the tone comes from the status, the text says it (colour is never the only cue). */
export const badge = (text, tone = toneOf(text)) => h("span", { class: `badge ${tone}` }, text)

const TONES = {
  good: ["FILLED", "SETTLED", "delivered", "active", "OPEN", "answered"],
  warn: ["PENDING", "PARTIALLY_FILLED", "WORKING", "retrying", "sending", "pending", "HOLIDAY", "rotated"],
  bad: ["REJECTED", "FAILED", "failed", "CANCELLED", "EXPIRED", "disabled", "revoked", "suspended", "timeout", "unreachable", "lost"]
}
const toneOf = (text) => Object.entries(TONES).find(([, values]) => values.includes(text))?.[0] ?? "neutral"

/** A monospaced identifier, shortened in the middle when long; the whole id stays in its title. */
export const id = (value) => h("code", { class: "id", title: value }, value)

/** USD with cents and thousands separators. */
export const usd = (n) => (typeof n === "number" ? n.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 }) : "—")

export const bytes = (n) => (n === null || n === undefined ? "—" : n < 1024 ? `${n} B` : `${(n / 1024).toFixed(1)} KiB`)
