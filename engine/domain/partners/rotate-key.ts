/**
 * Rotating a partner's full key on one environment, as a pure rule: the new key becomes the environment's active one,
 * the key the pointer named (if it is still active) becomes `rotated` and stops authenticating (spec: rotation
 * "invalidates the previous key"), and whether a key existed before tells registration whether to seed the sandbox
 * wallet. The dispatcher (app/portal.ts) draws and hashes the key, reads the pointer and the key it names, and writes
 * the plan: the retired key, the new key, then the pointer, in that order.
 * Owns: this rule and which prefix a rotated full key carries. Does not own hashing (app/partners/credentials.ts).
 */
import { type Environment, partitionOf } from "../../app/principal.ts"
import { type ApiKeyRecord, activeKey, type DrawnKey, KEY_PREFIX } from "./decide-partner.ts"

/** A full key's prefix: the sandbox's, or the live base's. */
export const fullKeyPrefix = (environment: Environment): string => (environment === "sandbox" ? KEY_PREFIX.sandbox : KEY_PREFIX.production)

/** What rotating reads: the partition's full-key pointer (the hash it names) and the key it names, if still stored. */
export interface RotationState {
  readonly partnerId: string
  readonly environment: Environment
  readonly pointer: string | undefined
  readonly previous: ApiKeyRecord | undefined
}

export interface KeyRotation {
  /** The previous key as rotated; absent when there was none, or it was no longer active (a revoked key stays revoked). */
  readonly retired?: ApiKeyRecord | undefined
  readonly key: ApiKeyRecord
  /** The pointer's new target, in "global" with the keys (a sandbox reset wipes the partition, never the pointer). */
  readonly pointer: { readonly partition: string; readonly keyHash: string }
  /** Whether the environment had a full key before: a rotation rather than a first issue. */
  readonly existed: boolean
  /** The raw key, shown once. */
  readonly raw: string
}

export const rotateFullKey = (state: RotationState, now: number, key: DrawnKey): KeyRotation => {
  const { previous } = state
  return {
    retired: previous?.status === "active" ? { ...previous, status: "rotated" } : undefined,
    key: activeKey(state.partnerId, state.environment, key, now),
    pointer: { partition: partitionOf(state.partnerId, state.environment), keyHash: key.hash },
    existed: state.pointer !== undefined,
    raw: key.raw
  }
}
