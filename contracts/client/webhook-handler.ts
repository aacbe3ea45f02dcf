/**
 * The reference partner's webhook handler: what a partner's backend does with each delivery it consumes (after
 * checking the signature, which `sokoni webhooks check` grades). The message pacts (contracts/webhook-messages.test.ts)
 * pin the payload fields it reads; the engine's real deliveries are verified against them.
 */
import type { Schemas } from "../../engine/contract/wire.ts"

export interface Envelope {
  readonly eventId: string
  readonly event: Schemas["EventName"]
  readonly timestamp: string
  readonly isSandbox: boolean
  readonly data: Record<string, unknown>
}

/** What the partner records for a delivery: an entry of its own ledger or order book. */
export type Effect =
  | { readonly kind: "balance"; readonly subAccountId: string | null; readonly balance: number }
  | { readonly kind: "kyc"; readonly subAccountId: string; readonly status: string }
  | { readonly kind: "order"; readonly orderId: string; readonly status: string }
  | { readonly kind: "ignored"; readonly event: string }

const text = (value: unknown, field: string): string => {
  if (typeof value !== "string") throw new Error(`${field} must be a string, got ${JSON.stringify(value)}`)
  return value
}
const amount = (value: unknown, field: string): number => {
  if (typeof value !== "number") throw new Error(`${field} must be a number, got ${JSON.stringify(value)}`)
  return value
}

export const handleWebhook = (envelope: Envelope): Effect => {
  const { data } = envelope
  switch (envelope.event) {
    case "deposit.confirmed":
    case "withdraw.confirmed":
      return { kind: "balance", subAccountId: text(data.subAccountId, "subAccountId"), balance: amount(data.newBalance, "newBalance") }
    case "wallet.credited":
      return { kind: "balance", subAccountId: null, balance: amount(data.newBalance, "newBalance") }
    case "kyc.updated":
      return { kind: "kyc", subAccountId: text(data.subAccountId, "subAccountId"), status: text(data.kycStatus, "kycStatus") }
    case "order.pending":
    case "order.filled":
      return { kind: "order", orderId: text(data.orderId, "orderId"), status: text(data.status, "status") }
    default:
      return { kind: "ignored", event: envelope.event }
  }
}
