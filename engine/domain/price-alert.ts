/**
 * The price-alert state machine (spec "Price alerts", D-076). Pure: the observed delayed price comes in as an
 * argument. ARMED fires when the price is past the threshold in the alert's direction: to DISARMED (repeat false,
 * final) or TRIGGERED (repeat true); TRIGGERED re-arms once the price is back on the other side. DISARMED never moves.
 */
export type AlertState = "ARMED" | "TRIGGERED" | "DISARMED"

export interface AlertRule {
  readonly condition: "above" | "below"
  /** Same unit as the prices (1/10000 of the local currency). */
  readonly threshold: number
  readonly repeat: boolean
}

/** Whether `price` is past the threshold in the rule's direction (at the threshold counts as crossed). */
export const crossed = (rule: AlertRule, price: number): boolean => (rule.condition === "above" ? price >= rule.threshold : price <= rule.threshold)

/** The next state after seeing `price`, and whether this observation fires the alert. */
export const observeAlert = (state: AlertState, rule: AlertRule, price: number): { readonly state: AlertState; readonly fired: boolean } => {
  if (state === "DISARMED") return { state, fired: false }
  if (state === "TRIGGERED") return { state: crossed(rule, price) ? "TRIGGERED" : "ARMED", fired: false }
  if (!crossed(rule, price)) return { state, fired: false }
  return { state: rule.repeat ? "TRIGGERED" : "DISARMED", fired: true }
}
