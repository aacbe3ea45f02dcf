// What each panel shows of the state (`GET /_sim/console/state`): pure rendering, actions are wired by console.js
// through the `act` callbacks.
import { badge, bytes, clockOnly, fill, h, id, table, time, usd } from "./dom.js"

const byId = (name) => document.getElementById(name)
const whose = (row) => h("span", {}, id(row.partnerId), h("span", { class: "sub" }, row.environment))

/** The exchanges: phase, local time and the next open and close, each a button that moves the clock there. */
export const renderMarkets = (state, act) => {
  const rows = state.exchanges.map((e) =>
    h(
      "tr",
      {},
      h("td", { title: e.name }, h("strong", {}, e.exchange), h("span", { class: "sub" }, e.country)),
      h("td", {}, badge(e.status)),
      h("td", { class: "num" }, e.localTime.slice(11, 16)),
      h("td", {}, jump(e.exchange, "open", e.nextOpen, act)),
      h("td", {}, jump(e.exchange, "close", e.nextClose, act))
    )
  )
  const columns = [{ label: "Exchange" }, { label: "Phase" }, { label: "Local", class: "num" }, { label: "Next open" }, { label: "Next close" }]
  fill(byId("markets"), table("Exchanges", columns, rows, "No exchanges."))
  renderNextBoundary(state, act)
}

/** The clock's next move worth making: the earliest open or close of any exchange. */
const renderNextBoundary = (state, act) => {
  const boundaries = state.exchanges.flatMap((e) => [
    { at: e.nextOpen, what: `${e.exchange} opens` },
    { at: e.nextClose, what: `${e.exchange} closes` }
  ])
  const next = boundaries.filter((b) => b.at !== null && b.at > state.now).sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0))[0]
  const button = byId("next-boundary")
  button.disabled = next === undefined
  button.textContent = next === undefined ? "No open or close ahead" : `Jump: ${next.what} ${clockOnly(next.at).slice(0, 5)}`
  button.setAttribute(
    "aria-label",
    next === undefined ? "No open or close ahead" : `Jump to the next open or close of any exchange: ${next.what} at ${time(next.at)}`
  )
  button.onclick = next === undefined ? null : () => act.jump(next.at)
}

const jump = (exchange, what, at, act) =>
  at === null
    ? h("span", { class: "muted" }, "—")
    : h(
        "button",
        { type: "button", class: "small", "aria-label": `Jump to the next ${what} of ${exchange}, ${time(at)}`, onclick: () => act.jump(at) },
        time(at).slice(5, 16)
      )

/** The desk's queue, oldest first, each order with its four decisions. */
export const renderDesk = (state, act) => {
  // manual and auto are chosen here; a random or scripted policy (set through the API) is shown, not offered.
  const mode = state.desk.policy.mode
  const extra = mode === "manual" || mode === "auto" ? [] : [h("option", { value: mode, disabled: true }, `${mode} (set by the API)`)]
  fill(byId("desk-mode"), h("option", { value: "manual" }, "manual"), h("option", { value: "auto" }, "auto"), extra)
  byId("desk-mode").value = mode
  const owners = new Map(state.orders.map((o) => [o.order.orderId, o]))
  const rows = state.desk.queue.map((o) => {
    const owner = owners.get(o.orderId)
    return h(
      "tr",
      { "data-order": o.orderId },
      h("td", {}, id(o.orderId), owner === undefined ? null : h("span", { class: "sub" }, `${owner.partnerId} · ${owner.environment}`)),
      h("td", {}, h("strong", {}, o.symbol), h("span", { class: "sub" }, `${o.type} ${o.orderType}`)),
      h("td", { class: "num" }, `${o.filledQuantity}/${o.quantity}`),
      h("td", { class: "num" }, o.priceAtOrder ?? "—"),
      h("td", {}, badge(o.status)),
      h(
        "td",
        {},
        h(
          "div",
          { class: "actions" },
          button("Fill", `Fill order ${o.orderId}`, () => act.fill(o), "primary"),
          button("Partial…", `Partially fill order ${o.orderId}`, () => act.partial(o)),
          button("Reject…", `Reject order ${o.orderId}`, () => act.reject(o), "danger"),
          button("Fail settlement…", `Fail the settlement of order ${o.orderId}`, () => act.failSettlement(o), "danger")
        )
      )
    )
  })
  const columns = [
    { label: "Order · partner" },
    { label: "Instrument" },
    { label: "Filled", class: "num" },
    { label: "Price", class: "num" },
    { label: "Status" },
    { label: "Decide" }
  ]
  const empty =
    state.desk.policy.mode === "manual" ? "Nothing awaits the desk." : `Nothing awaits the desk (policy ${state.desk.policy.mode}: it decides by itself).`
  const more =
    state.desk.queued > state.desk.queue.length
      ? h("p", { class: "note" }, `The oldest ${state.desk.queue.length} of ${state.desk.queued} awaiting the desk.`)
      : null
  fill(byId("desk"), table("Orders awaiting the desk", columns, rows, empty), more)
}

const button = (label, name, onclick, tone = "") => h("button", { type: "button", class: `small ${tone}`, "aria-label": name, onclick }, label)

export const renderOrders = (state) => {
  const rows = state.orders.map(({ order: o, ...owner }) =>
    h(
      "tr",
      { "data-order": o.orderId },
      h("td", {}, clockOnly(o.createdAt), h("span", { class: "sub" }, o.createdAt.slice(0, 10))),
      h("td", {}, id(o.orderId), h("span", { class: "sub" }, `${owner.partnerId} · ${owner.environment}`)),
      h("td", {}, h("strong", {}, o.symbol), h("span", { class: "sub" }, `${o.type} ${o.orderType}`)),
      h(
        "td",
        { class: "num" },
        `${o.filledQuantity}/${o.quantity}`,
        h("span", { class: "sub" }, o.averageFillPrice === null ? "" : `avg ${o.averageFillPrice}`)
      ),
      h("td", { class: "num" }, usd(o.totalAmount)),
      h(
        "td",
        { class: "status" },
        h("div", { class: "stack" }, badge(o.status), o.rejectionCode === null ? null : h("span", { class: "sub" }, o.rejectionCode))
      ),
      h("td", {}, badge(o.settlementStatus))
    )
  )
  const columns = [
    { label: "Time" },
    { label: "Order · partner" },
    { label: "Instrument" },
    { label: "Filled", class: "num" },
    { label: "Total USD", class: "num" },
    { label: "Status" },
    { label: "Settlement" }
  ]
  fill(byId("orders"), table("Orders", columns, rows, "No orders yet."))
}

const attemptTone = (a) => (a.outcome === "answered" && a.status >= 200 && a.status < 300 ? "good" : a.outcome === "answered" ? "warn" : "bad")
const attemptText = (a) =>
  `#${a.attempt} ${a.outcome === "answered" ? a.status : a.outcome} ${a.latencyMs === null ? "" : `${a.latencyMs} ms `}${bytes(a.bytes)} ${clockOnly(a.at)}`

export const renderDeliveries = (state) => {
  const rows = state.deliveries.map((d) =>
    h(
      "tr",
      { "data-delivery": d.deliveryId, "data-event": d.event },
      h("td", {}, clockOnly(d.createdAt), h("span", { class: "sub" }, d.createdAt.slice(0, 10))),
      h("td", {}, h("strong", {}, d.event), h("span", { class: "sub", title: d.url }, d.url)),
      h("td", {}, badge(d.state), d.nextAttemptAt === null ? null : h("span", { class: "sub" }, `next ${clockOnly(d.nextAttemptAt)}`)),
      h(
        "td",
        { class: "wrap" },
        d.attempts.length === 0
          ? h("span", { class: "muted" }, "none yet")
          : d.attempts.map((a) => h("span", { class: `attempt ${attemptTone(a)}` }, attemptText(a)))
      )
    )
  )
  const columns = [{ label: "Time" }, { label: "Event / URL" }, { label: "State" }, { label: "Attempts" }]
  fill(byId("deliveries"), table("Webhook deliveries", columns, rows, "No deliveries yet: register a webhook (POST /webhooks)."))
}

export const renderEvents = (state) => {
  const rows = state.events.map((e) =>
    h(
      "tr",
      {},
      h("td", {}, clockOnly(e.timestamp), h("span", { class: "sub" }, e.timestamp.slice(0, 10))),
      h("td", {}, whose(e)),
      h("td", { class: "num" }, e.position),
      h("td", {}, h("strong", {}, e.event)),
      h("td", { class: "data", title: JSON.stringify(e.data, null, 2) }, JSON.stringify(e.data))
    )
  )
  const columns = [{ label: "Time" }, { label: "Partner" }, { label: "#", class: "num" }, { label: "Event" }, { label: "Data" }]
  fill(byId("events"), table("Event log", columns, rows, "No events yet."))
}

export const renderPartners = (state) => {
  const rows = state.partners.map((p) =>
    h(
      "tr",
      {},
      h("td", {}, h("strong", {}, p.businessName), h("span", { class: "sub" }, p.email)),
      h("td", {}, id(p.partnerId), h("span", { class: "sub" }, `${p.tier}, since ${time(p.createdAt)}`)),
      h("td", {}, badge(p.status)),
      h(
        "td",
        {},
        p.keys.map((k) =>
          h("div", { class: "line" }, h("code", {}, `…${k.last4}`), h("span", { class: "muted" }, ` ${k.environment} ${k.kind} `), badge(k.status))
        )
      ),
      h(
        "td",
        { class: "num" },
        p.wallets.map((w) =>
          h(
            "div",
            {},
            `${usd(w.balance)} `,
            h("span", { class: "muted" }, w.environment),
            w.reserved > 0 ? h("span", { class: "sub" }, `${usd(w.reserved)} reserved`) : null
          )
        )
      ),
      h(
        "td",
        { class: "wrap" },
        p.webhooks.length === 0 ? h("span", { class: "muted" }, "none") : p.webhooks.map((w) => h("div", {}, badge(w.status), " ", h("code", {}, w.url)))
      )
    )
  )
  const columns = [
    { label: "Partner" },
    { label: "Id, tier" },
    { label: "Status" },
    { label: "Keys" },
    { label: "Master wallets (USD)", class: "num" },
    { label: "Webhooks" }
  ]
  fill(byId("partners"), table("Partners", columns, rows, "No partners yet: POST /_sim/partners creates one."))
}

export const renderStreams = (state) => {
  const rows = state.streams.map((s) =>
    h(
      "tr",
      {},
      h("td", {}, whose(s)),
      h("td", {}, time(s.openedAt)),
      h("td", { class: "num" }, s.position),
      h("td", { class: "num" }, s.sent),
      h("td", { class: "wrap" }, s.events === null ? h("span", { class: "muted" }, "all") : s.events.join(", "))
    )
  )
  const columns = [{ label: "Partner" }, { label: "Opened" }, { label: "Position", class: "num" }, { label: "Sent", class: "num" }, { label: "Events" }]
  fill(byId("streams"), table("Stream connections", columns, rows, "No stream open (GET /stream)."))
}
