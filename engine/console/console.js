// The console's entry: asks for the admin token, reads the state, renders every panel, and stays live on the
// console feed (E-383): any message there means something changed, so the state is read again (at most one read at
// a time, coalesced).
import { ApiError, call, callIfPresent, readFeed, token } from "./api.js"
import { makeActions } from "./actions.js"
import { renderFaults, renderFindings } from "./checks.js"
import { addRequest, noRequests } from "./extras.js"
import { renderDeliveries, renderDesk, renderEvents, renderMarkets, renderOrders, renderPartners, renderStreams } from "./panels.js"

const byId = (name) => document.getElementById(name)
const RECONNECT_MS = 2000

const setLive = (state, text) => {
  const live = byId("live")
  live.className = `live ${state}`
  live.textContent = text
}

/** Shows a refusal or failure in the notice (or clears it); a wrong token asks for another. */
const report = (failure) => {
  const notice = byId("notice")
  if (failure === undefined) {
    notice.hidden = true
    return
  }
  if (failure instanceof ApiError && failure.status === 401) return askToken(failure.message)
  notice.textContent = failure instanceof ApiError ? `${failure.code}: ${failure.message}` : String(failure.message ?? failure)
  notice.hidden = false
}

const askToken = (problem) => {
  const dialog = byId("token-dialog")
  const error = byId("token-error")
  error.hidden = problem === undefined
  error.textContent = problem ?? ""
  byId("token-input").value = token.get()
  if (!dialog.open) dialog.showModal()
  byId("token-input").focus()
}

const drawn = new Map()
/** Runs `render` when `shown` differs from what panel `name` shows already. */
const draw = (name, shown, render) => {
  const text = JSON.stringify(shown)
  if (drawn.get(name) === text) return
  drawn.set(name, text)
  render()
}

/**
 * Reads start at least this far apart: on an engine under load the feed never rests, and each read costs the engine
 * some milliseconds of CPU (about 17 ms for 20 partners and 200 queued orders), so the console takes at most a few
 * per second.
 */
const MIN_READ_GAP_MS = 300
let reading = false
let again = false
let lastRead = 0
/** Reads the state and renders it; a call made while a read is under way makes one more read after it. */
const refresh = async () => {
  if (reading) {
    again = true
    return
  }
  reading = true
  const wait = lastRead + MIN_READ_GAP_MS - performance.now()
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
  lastRead = performance.now()
  try {
    const state = await call("GET", "/_sim/console/state")
    byId("now").textContent = `${state.now.slice(0, 10)} ${state.now.slice(11, 19)} UTC`
    byId("now").setAttribute("datetime", state.now)
    byId("mode").textContent = `clock ${state.mode}`
    // A panel is drawn again only when what it shows changed: a button under the pointer stays put otherwise.
    draw("markets", state.exchanges, () => renderMarkets(state, actions))
    draw("desk", [state.desk, state.orders], () => renderDesk(state, actions))
    draw("orders", state.orders, () => renderOrders(state))
    draw("deliveries", state.deliveries, () => renderDeliveries(state))
    draw("events", state.events, () => renderEvents(state))
    draw("partners", state.partners, () => renderPartners(state))
    draw("streams", state.streams, () => renderStreams(state))
    const [findings, faults] = await Promise.all([callIfPresent("GET", "/_sim/findings"), callIfPresent("GET", "/_sim/faults")])
    draw("findings", findings ?? null, () => renderFindings(findings))
    draw("faults", faults ?? null, () => renderFaults(faults))
    document.body.dataset.loaded = "true"
  } catch (failure) {
    report(failure)
  } finally {
    reading = false
    if (again) {
      again = false
      void refresh()
    }
  }
}

const actions = makeActions({ refresh, report })

let feed
/** Follows the feed; reconnects after RECONNECT_MS when it ends or fails, until a wrong token stops it. */
const follow = async () => {
  feed?.abort()
  const controller = new AbortController()
  feed = controller
  while (!controller.signal.aborted) {
    try {
      await readFeed((name, data) => {
        if (name === "hello") setLive("on", "Live")
        if (name === "exchange") addRequest(data, new Date().toTimeString().slice(0, 8))
        void refresh()
      }, controller.signal)
    } catch (failure) {
      if (controller.signal.aborted) return
      if (failure instanceof ApiError && failure.status === 401) {
        setLive("off", "Not connected")
        return report(failure)
      }
    }
    if (controller.signal.aborted) return
    setLive("retry", "Reconnecting…")
    await new Promise((resolve) => setTimeout(resolve, RECONNECT_MS))
  }
}

const wire = () => {
  byId("token-form").addEventListener("submit", (event) => {
    event.preventDefault()
    token.set(byId("token-input").value.trim())
    byId("token-dialog").close()
    void follow()
  })
  byId("change-token").addEventListener("click", () => askToken())
  byId("advance").addEventListener("submit", (event) => {
    event.preventDefault()
    actions.advance(Number(byId("advance-seconds").value))
  })
  for (const button of document.querySelectorAll("[data-seconds]")) button.addEventListener("click", () => actions.advance(Number(button.dataset.seconds)))
  byId("desk-mode").addEventListener("change", (event) => actions.deskMode(event.target.value))
}

wire()
noRequests()
if (token.get() === "") askToken()
else void follow()
