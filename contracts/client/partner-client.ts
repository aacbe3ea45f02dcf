/**
 * A reference partner client, typed from the contract (engine/contract/wire.ts is generated from spec/openapi.yaml):
 * the calls a partner's backend makes in its main flows. The Pact consumer tests (contracts/pact.test.ts) pin what
 * it expects of the API; the provider verification replays those expectations against the engine.
 * Owns nothing of the engine: it talks HTTP with `fetch` and knows only the contract.
 */
import type { RequestBody, ResponseBody } from "../../engine/contract/wire.ts"

export interface ClientOptions {
  /** e.g. http://127.0.0.1:4010/api/sandbox/v1/partner */
  readonly baseUrl: string
  readonly apiKey: string
  /** Idempotency-Key of each mutation; the default makes one from a counter (a real client would persist it). */
  readonly idempotencyKey?: () => string
}

export class PartnerApiError extends Error {
  readonly status: number
  readonly code: string
  constructor(status: number, code: string, message: string) {
    super(`${status} ${code}: ${message}`)
    this.status = status
    this.code = code
  }
}

export const makePartnerClient = (options: ClientOptions) => {
  let sequence = 0
  const nextKey = options.idempotencyKey ?? (() => `client-${++sequence}-0000`)
  const request = async <A>(method: string, path: string, body?: unknown): Promise<A> => {
    const headers: Record<string, string> = { "x-api-key": options.apiKey, accept: "application/json" }
    if (body !== undefined) headers["content-type"] = "application/json"
    if (method !== "GET") headers["idempotency-key"] = nextKey()
    const response = await fetch(`${options.baseUrl}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) })
    const json = (await response.json()) as { error?: { code: string; message: string } }
    if (!response.ok) throw new PartnerApiError(response.status, json.error?.code ?? "UNKNOWN", json.error?.message ?? "")
    return json as A
  }
  return {
    createSubAccount: (body: RequestBody<"createSubAccount">) => request<ResponseBody<"createSubAccount", 201>>("POST", "/users", body),
    assertKyc: (userId: string, body: RequestBody<"assertSubAccountKyc">) =>
      request<ResponseBody<"assertSubAccountKyc", 200>>("POST", `/users/${userId}/kyc`, body),
    deposit: (userId: string, amount: number) => request<ResponseBody<"depositToSubAccount", 200>>("POST", `/users/${userId}/deposit`, { amount }),
    withdraw: (userId: string, amount: number) => request<ResponseBody<"withdrawFromSubAccount", 200>>("POST", `/users/${userId}/withdraw`, { amount }),
    masterWallet: () => request<ResponseBody<"getMasterWallet", 200>>("GET", "/wallet"),
    quote: (symbol: string, query: { side: "BUY" | "SELL"; quantity: number; subAccountId?: string }) => {
      const params = new URLSearchParams({ side: query.side, quantity: String(query.quantity) })
      if (query.subAccountId !== undefined) params.set("subAccountId", query.subAccountId)
      return request<ResponseBody<"getQuote", 200>>("GET", `/quote/${symbol}?${params}`)
    },
    trade: (userId: string, body: RequestBody<"placeSubAccountTrade">) =>
      request<ResponseBody<"placeSubAccountTrade", 202>>("POST", `/users/${userId}/trade`, body),
    cancel: (orderId: string) => request<ResponseBody<"cancelOrder", 200>>("DELETE", `/orders/${orderId}`),
    orders: (userId: string) => request<ResponseBody<"listSubAccountOrders", 200>>("GET", `/users/${userId}/orders`),
    registerWebhook: (body: RequestBody<"createWebhook">) => request<ResponseBody<"createWebhook", 201>>("POST", "/webhooks", body),
    /** Production only, with the full `pk_live_` key (the sandbox answers 403): build the client on the production base. */
    // `repeat` has a default in the contract (false), which the generated type renders as required.
    createPriceAlert: (body: Omit<RequestBody<"createPriceAlert">, "repeat"> & { readonly repeat?: boolean }) =>
      request<ResponseBody<"createPriceAlert", 201>>("POST", "/price-alerts", body),
    priceAlerts: () => request<ResponseBody<"listPriceAlerts", 200>>("GET", "/price-alerts")
  }
}

export type PartnerClient = ReturnType<typeof makePartnerClient>
