/**
 * Who is calling and where: the authenticated partner, its environment and the partition its data lives in.
 * Plain data shared by the app services and the HTTP gateway.
 */

export type Environment = "sandbox" | "production"
export type KeyKind = "full" | "data"
export type Tier = "starter" | "growth" | "enterprise"

export interface Principal {
  readonly partnerId: string
  readonly environment: Environment
  readonly keyKind: KeyKind
  readonly tier: Tier
  readonly markupBps: number
  /** `partnerId:environment`: the isolation unit of every document, event and job. */
  readonly partition: string
  /** Which credential authenticated the call, as the audit log names it (never the key itself): kind and last 4. */
  readonly credential?: { readonly kind: "api_key" | "data_key" | "oauth_token"; readonly last4: string }
}

export const partitionOf = (partnerId: string, environment: Environment) => `${partnerId}:${environment}`
export const isSandboxPartition = (partition: string) => partition.endsWith(":sandbox")
