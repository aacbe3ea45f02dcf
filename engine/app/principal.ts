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
  /** An OAuth access token's scopes (D-122): the operations it may call. Absent for a key, whose kind decides. */
  readonly tokenScopes?: ReadonlyArray<string>
  /** The environment's ipAllowlist setting when it is not empty (D-127): the addresses the credentials work from. */
  readonly ipAllowlist?: ReadonlyArray<string>
}

/**
 * Whether a token's scopes let it call an operation that names `required` (any one suffices, as the contract's
 * security requirement lists them); a key, or an operation that names no scope, is not narrowed here.
 */
export const scopeAllows = (principal: Principal, required: ReadonlyArray<string>): boolean =>
  principal.tokenScopes === undefined || required.length === 0 || required.some((s) => principal.tokenScopes?.includes(s) === true)

export const partitionOf = (partnerId: string, environment: Environment) => `${partnerId}:${environment}`
export const isSandboxPartition = (partition: string) => partition.endsWith(":sandbox")
/** The partner a partition (`partnerId:environment`) belongs to. */
export const partnerOfPartition = (partition: string) => partition.slice(0, partition.lastIndexOf(":"))
