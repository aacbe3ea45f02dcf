// What the console's buttons do: each calls an existing control operation and reports a refusal in the notice.
// Decisions that need more than a click (partial fill, rejection, settlement failure) ask in one dialog.
import { call } from "./api.js"
import { h } from "./dom.js"

const REJECTION_CODES = ["LIQUIDITY_UNAVAILABLE", "PRICE_OUT_OF_TOLERANCE", "MARKET_CLOSED", "COMPLIANCE_HOLD", "INSTRUMENT_SUSPENDED"]
const byId = (name) => document.getElementById(name)
const orderPath = (o, what) => `/_sim/desk/orders/${encodeURIComponent(o.orderId)}/${what}`

/**
 * Opens the action dialog with `fields` and resolves with the form's values on Apply, undefined on Cancel. A refusal
 * of `submit(values)` stays in the dialog, so the operator can correct it.
 */
const ask = (title, fields, submitLabel, submit) =>
  new Promise((resolve) => {
    const dialog = byId("action-dialog")
    const form = byId("action-form")
    const error = byId("action-error")
    byId("action-title").textContent = title
    byId("action-submit").textContent = submitLabel
    byId("action-fields").replaceChildren(...fields)
    error.hidden = true
    const finish = (value) => {
      form.onsubmit = null
      byId("action-cancel").onclick = null
      dialog.close()
      resolve(value)
    }
    form.onsubmit = async (event) => {
      event.preventDefault()
      const values = Object.fromEntries(new FormData(form))
      try {
        finish(await submit(values))
      } catch (failure) {
        error.textContent = failure.message
        error.hidden = false
      }
    }
    byId("action-cancel").onclick = () => finish(undefined)
    dialog.onclose = () => resolve(undefined)
    dialog.showModal()
    fields
      .find((f) => f.querySelector?.("input, select"))
      ?.querySelector("input, select")
      ?.focus()
  })

const field = (label, input) => h("div", {}, h("label", { for: input.id }, label), input)

export const makeActions = ({ refresh, report }) => {
  const run = async (work) => {
    try {
      await work()
      report(undefined)
    } catch (failure) {
      report(failure)
    }
    refresh()
  }
  return {
    fill: (o) => run(() => call("POST", orderPath(o, "fill"), {})),
    partial: (o) => {
      const remaining = o.quantity - o.filledQuantity
      const quantity = h("input", {
        id: "partial-quantity",
        name: "quantity",
        type: "number",
        min: 1,
        max: remaining,
        step: 1,
        required: true,
        value: Math.max(1, Math.floor(remaining / 2))
      })
      const price = h("input", { id: "partial-price", name: "price", type: "number", min: 0, step: "any", placeholder: "the quote's price" })
      return ask(`Partially fill ${o.orderId}`, [field(`Quantity (of ${remaining} remaining)`, quantity), field("Price (optional)", price)], "Fill", (v) =>
        call("POST", orderPath(o, "fill"), { quantity: Number(v.quantity), ...(v.price === "" ? {} : { price: Number(v.price) }) })
      ).then(refresh)
    },
    reject: (o) => {
      const code = h(
        "select",
        { id: "reject-code", name: "rejectionCode" },
        REJECTION_CODES.map((c) => h("option", { value: c }, c))
      )
      const reason = h("input", { id: "reject-reason", name: "rejectionReason", required: true, value: "Rejected by the desk" })
      return ask(`Reject ${o.orderId}`, [field("Rejection code", code), field("Reason", reason)], "Reject", (v) =>
        call("POST", orderPath(o, "reject"), { rejectionCode: v.rejectionCode, rejectionReason: v.rejectionReason })
      ).then(refresh)
    },
    failSettlement: (o) => {
      const reason = h("input", { id: "settlement-reason", name: "rejectionReason", placeholder: "Settlement failed" })
      return ask(`Fail the settlement of ${o.orderId}`, [field("Reason (optional)", reason)], "Fail settlement", (v) =>
        call("POST", orderPath(o, "fail-settlement"), v.rejectionReason === "" ? {} : { rejectionReason: v.rejectionReason })
      ).then(refresh)
    },
    jump: (at) => run(() => call("POST", "/_sim/clock/advance", { to: at })),
    advance: (seconds) => run(() => call("POST", "/_sim/clock/advance", { seconds })),
    deskMode: (mode) => run(() => call("PUT", "/_sim/desk/policy", { mode }))
  }
}
