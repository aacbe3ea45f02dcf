/**
 * Issuing a partner's read-only data key (`POST /api-keys/data-key`) as a pure rule: only a full key may ask for one;
 * the new data key becomes the environment's active one and the data key the pointer named (if still active) becomes
 * `rotated` and stops authenticating at once: one active data key, so rotating breaks existing installs (the note
 * says so). The dispatcher (app/keys/service.ts) refuses a data-key caller before drawing anything, draws and hashes
 * the key, reads the pointer and the key it names, and writes the plan: the retired key, the new key, then the
 * pointer, in that order. A sibling of rotate-key.ts (full keys).
 * Owns: this rule and the DataKeyResponse answer. Does not own hashing nor what a data key may call (the gateway).
 */
import type { Environment, KeyKind } from "../../app/principal.ts"
import type { Schemas } from "../../contract/wire.ts"
import { type ApiFailure, fail } from "../errors.ts"
import type { ApiKeyRecord, DrawnKey } from "./decide-partner.ts"

export const DATA_KEY_NOTE =
  "Read-only key for GET on the market-data families; displayed once. Only one data key is active: rotating it breaks existing installs."

/** A data key is issued to a full key's caller; a data key cannot issue another (403 FORBIDDEN). */
export const refuseDataKey = (keyKind: KeyKind): ApiFailure | undefined =>
  keyKind === "full" ? undefined : fail("FORBIDDEN", "a data key is issued with a full production key")

/** What issuing reads: who asks, and the data key the partition's pointer names, if any is stored. */
export interface DataKeyState {
  readonly partnerId: string
  readonly environment: Environment
  /** The partner environment's partition, which the pointer is named after. */
  readonly partition: string
  readonly previous: ApiKeyRecord | undefined
}

export interface DataKeyRotation {
  /** The previous data key as rotated; absent when there was none, or it was no longer active. */
  readonly retired: ApiKeyRecord | undefined
  readonly key: ApiKeyRecord
  /** The pointer's new target, in "global" with the keys (a sandbox reset wipes the partition, never the pointer). */
  readonly pointer: { readonly partition: string; readonly keyHash: string }
  readonly answer: Schemas["DataKeyResponse"]
}

export const rotateDataKey = (state: DataKeyState, now: number, key: DrawnKey): DataKeyRotation => {
  const { previous } = state
  return {
    retired: previous?.status === "active" ? { ...previous, status: "rotated" } : undefined,
    key: {
      keyHash: key.hash,
      partnerId: state.partnerId,
      environment: state.environment,
      kind: "data",
      status: "active",
      last4: key.raw.slice(-4),
      createdAt: now
    },
    pointer: { partition: state.partition, keyHash: key.hash },
    answer: { dataKey: key.raw, note: DATA_KEY_NOTE }
  }
}
