/**
 * Shared by the `sokoni conform` tests: our engine in-process on a free port (manual clock at a Monday open, control
 * API on), and a conform run against it whose real-time waits fail the test (with a control API nothing waits).
 */
import type { EngineConfig } from "../../engine/runtime.ts"
import { runConform, type ConformOptions } from "../../engine/conform/conform.ts"
import { type RunningServer, startServer } from "../../engine/http/node-server.ts"

export const ADMIN = "conform-admin"
export const MONDAY_OPEN = Date.parse("2026-11-23T08:00:00.000Z")

export const startTarget = async (extra: Partial<EngineConfig> = {}): Promise<RunningServer & { base: string }> => {
  const server = await startServer({ store: "memory", clock: "manual", start: MONDAY_OPEN, seed: 1, desk: "manual", adminToken: ADMIN, ...extra }, 0)
  const address = server.server.address()
  if (address === null || typeof address === "string") throw new Error("no port")
  return { ...server, base: `http://127.0.0.1:${address.port}` }
}

/** A conform run; the wall clock is a counter so durations are deterministic, and a real wait is an error. */
export const conformAgainst = (base: string, options: Partial<ConformOptions> = {}) => {
  let tick = 0
  return runConform({
    base,
    adminToken: ADMIN,
    seed: 7,
    now: () => MONDAY_OPEN + tick++,
    sleep: async (ms) => {
      throw new Error(`conform waited ${ms} ms of real time against a target with a virtual clock`)
    },
    // The failure bound of a stream read: it ends only a read that would hang (a missing event).
    bound: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    ...options
  })
}
