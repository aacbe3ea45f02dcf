/**
 * `sokoni conform`: runs every registered check against a target over the wire and returns one RunReport (written by
 * engine/report). Owns the registry (contract checks, stateful checks, scenario suites), the set-up of the partner it
 * checks with (made through the control API when the target has one, else the keys given), the rate-limit budget
 * between checks, progress, and turning each outcome into a report row with its reproducer and replay command.
 * Does not own the probes (contract-checks.ts, stateful-checks.ts), the transport (target.ts), nor the CLI.
 *
 * Time: no clock is read here; `now` and `sleep` come from the caller (target.ts says how they are used).
 */
import type { CheckResult, RunReport } from "../report/model.ts"
import { coverageOf, describeSkew, modeCoverage } from "./coverage.ts"
import { isoAt } from "../sim/clock.ts"
import { type ContractContext, type Credentials, contractChecks, type Outcome } from "./contract-checks.ts"
import { type HistoryEntry, historyChecks } from "./history.ts"
import { scenarioChecks } from "./scenario-checks.ts"
import { type StatefulCheck, statefulChecks } from "./stateful-checks.ts"
import type { FaultPlan } from "../domain/faults.ts"
import { faultNotes, installFaults } from "./fault-plan.ts"
import { shellQuote } from "./exchange-text.ts"
import { type Exchange, makeTarget, rateOf, SANDBOX_BASE, type Target } from "./target.ts"

export interface ConformOptions {
  readonly base: string
  readonly sandboxKey?: string | undefined
  readonly liveKey?: string | undefined
  readonly adminToken?: string | undefined
  readonly seed: number
  readonly now: () => number
  readonly sleep: (ms: number) => Promise<void>
  /** Failure bound of reads that wait for something to arrive (default `sleep`); see target.ts. */
  readonly bound?: ((ms: number) => Promise<void>) | undefined
  readonly fetch?: typeof fetch | undefined
  /** Only the checks whose id is listed (default every check). */
  readonly only?: ReadonlyArray<string> | undefined
  /** Called once the target is known: where it serves the contract, and how many checks will run. */
  readonly onStart?: ((info: { readonly layout: "bases" | "flat" | "prefix"; readonly checks: number }) => void) | undefined
  /** The prefix the target serves the contract's paths under, instead of the contract's bases (`--prefix`). */
  readonly prefix?: string | undefined
  /** Called after every check with how far the run is. */
  readonly onProgress?: ((progress: Progress) => void) | undefined
  /** Told before every real wait: what it waits for and for how long at most. */
  readonly onWait?: ((what: string, ms: number) => void) | undefined
  /**
   * Records the run's history (every partner-API exchange, stream message and delivery received), hands each entry
   * here as it happens, and judges the whole history at the end: one `history` check per rule (history.ts).
   */
  readonly onHistory?: ((entry: HistoryEntry) => void) | undefined
  /** Where the CLI writes that history (for the replay command of a history violation). */
  readonly historyFile?: string | undefined
  /** A fault plan the target injects during the run (`--faults FILE`, fault-plan.ts); needs the control API. */
  readonly faults?: FaultPlan | undefined
}

export interface Progress {
  readonly done: number
  readonly total: number
  readonly failed: number
  readonly skipped: number
  /** Estimated milliseconds left, from the mean duration of the checks so far. */
  readonly etaMs: number
  readonly current: string
}

/** One entry of the registry: what it is called and how it runs against a prepared context. */
export interface RegisteredCheck {
  readonly id: string
  readonly suite: string
  readonly name: string
  readonly operation?: string
  readonly run: (ctx: RunContext) => Promise<Outcome>
}

export interface RunContext extends ContractContext {
  /** A fresh partner (with the control API), so a check starts with a full rate-limit window and its own wallet. */
  readonly freshPartner: () => Promise<Credentials | undefined>
  /** How to reach the target for checks that bring their own client (the scenario runner). */
  readonly wire: {
    readonly base: string
    readonly adminToken: string | undefined
    readonly sandboxKey: string | undefined
    readonly liveKey: string | undefined
    readonly fetch: typeof fetch | undefined
    /** The path the target serves a contract path at (its layout: the contract's bases, the root, a prefix). */
    readonly pathOf: (path: string) => string
  }
  /** When the run started on the target's clock (epoch ms), to make Idempotency-Keys unique per run. */
  readonly startedAt: number
  /** Conform's own clock (epoch ms): how much real time passed between two answers. */
  readonly now: () => number
}

/** The command that replays the whole run with the same seed (keys from the environment, never printed). */
export const replayCommand = (options: ConformOptions): string =>
  [
    "npx sokoni conform",
    `--base ${shellQuote(options.base)}`,
    ...(options.adminToken === undefined ? [] : [`--admin-token "$SOKONI_ADMIN_TOKEN"`]),
    ...(options.sandboxKey === undefined ? [] : [`--sandbox-key "$SOKONI_SANDBOX_KEY"`]),
    ...(options.liveKey === undefined ? [] : [`--live-key "$SOKONI_LIVE_KEY"`]),
    `--seed ${options.seed}`,
    ...(options.faults === undefined ? [] : ["--faults FILE"])
  ].join(" ")

/**
 * Every check conform knows: the contract checks, the stateful ones (trading needs the markets open, as the target
 * starts), then the scenario suites, each moving the target's clock to its start (so last: a clock never goes back),
 * and last of all the scenarios that start the target over (`POST /_sim/reset`, E-243), which ends every other
 * check's partners and state.
 */
export const registry = (): ReadonlyArray<RegisteredCheck> => [...contractChecks(), ...statefulChecks().map((c: StatefulCheck) => c), ...scenarioChecks()]

/**
 * The registry in the order this target runs it. Without a control API the rate-limit oracle spends the one window the
 * given key has, shared with every other check and scenario: it runs last, so nothing after it meets a 429 (E-284).
 */
export const runOrder = (checks: ReadonlyArray<RegisteredCheck>, hasControl: boolean): ReadonlyArray<RegisteredCheck> =>
  hasControl ? checks : [...checks.filter((c) => c.id !== RATE_LIMIT_ORACLE), ...checks.filter((c) => c.id === RATE_LIMIT_ORACLE)]

const RATE_LIMIT_ORACLE = "rate-limit-oracle"

/** Makes a partner through the control API (enterprise tier: the contract checks' production calls fit one window). */
const createPartner = async (target: Target, seed: number, n: number): Promise<Credentials | undefined> => {
  if (!target.hasControl) return undefined
  const r = await target.admin("POST", "/_sim/partners", {
    businessName: `Conform Partner ${n}`,
    email: `conform-${seed}-${n}@sokoni.test`,
    tier: "enterprise"
  })
  if (r.status !== 201) throw new Error(`the control API refused to create a partner: ${r.status} ${r.text.slice(0, 200)}`)
  const body = r.json as { partnerId: string; sandboxKey: string; liveKey: string }
  const token = await target.admin("POST", "/_sim/idp/tokens", { uid: `conform-member-${n}`, email: `member-${n}@conform.test`, emailVerified: true })
  const idToken = token.status === 200 ? (token.json as { idToken: string }).idToken : undefined
  // Production starts at 0: fund it so trading checks can run in either environment.
  await target.admin("POST", `/_sim/partners/${body.partnerId}/wallet/credit`, { environment: "production", amount: 100_000 })
  return { sandboxKey: body.sandboxKey, liveKey: body.liveKey, idToken, partnerId: body.partnerId }
}

/**
 * Whether the target keeps what it is given, asked once without a control API: a sub-account never made must not be
 * found, and one it just created (named by run) must be. A contract mock answers fixed examples, and its behaviour
 * checks would all read as the target's faults. Returns why the target keeps no state, or undefined when it does (or
 * cannot be asked).
 */
const statelessness = async (target: Target, credentials: Credentials, run: string): Promise<string | undefined> => {
  if (target.hasControl || credentials.sandboxKey === undefined) return undefined
  const key = { "x-api-key": credentials.sandboxKey }
  const absent = `usr_conform_never_made_${run.replace(/\W/g, "_")}`
  const ghost = await target.call("GET", `${SANDBOX_BASE}/users/${absent}`, { headers: key })
  const found = (ghost.json as { subAccountId?: unknown } | null)?.subAccountId
  if (ghost.status === 200)
    return `the target keeps no state: it answered 200 for a sub-account never made (GET /users/${absent}${typeof found === "string" ? ` gave ${found}` : ""}); its behaviour checks (stateful, scenarios) are skipped, its contract checks stand`
  const made = await target.call("POST", `${SANDBOX_BASE}/users`, {
    headers: { ...key, "idempotency-key": `conform-${run}-state-probe` },
    body: { externalId: `conform-${run}-state-probe`, email: `conform-${run}-state-probe@partner.test`, firstName: "Con", lastName: "Form" }
  })
  const id = (made.json as { subAccountId?: unknown } | null)?.subAccountId
  if (made.status !== 201 || typeof id !== "string") return undefined
  const read = await target.call("GET", `${SANDBOX_BASE}/users/${encodeURIComponent(id)}`, { headers: key })
  if (read.status === 200 && (read.json as { subAccountId?: unknown } | null)?.subAccountId === id) return undefined
  return `the target keeps no state: a sub-account it had just created (POST /users answered 201 ${id}) was not there (GET /users/${id} answered ${read.status}); its behaviour checks (stateful, scenarios) are skipped, its contract checks stand`
}

/** The checks that rest on the target keeping state: every one but the contract's. */
const BEHAVIOUR_SUITE = /^(stateful|scenario)/

/** `--only` names check ids (`quote-ttl`, `scenario`) or whole check names (`scenario: settlement/x.yaml`). */
const selected = (options: ConformOptions, c: RegisteredCheck) => options.only === undefined || options.only.includes(c.id) || options.only.includes(c.name)

export const runConform = async (options: ConformOptions): Promise<RunReport> => {
  const history: Array<HistoryEntry> = []
  const target = makeTarget({
    base: options.base,
    adminToken: options.adminToken,
    now: options.now,
    sleep: options.sleep,
    bound: options.bound,
    fetch: options.fetch,
    onWait: options.onWait,
    prefix: options.prefix,
    record:
      options.onHistory === undefined
        ? undefined
        : (entry) => {
            history.push(entry)
            options.onHistory?.(entry)
          }
  })
  const layout = await target.detectLayout()
  await target.syncClock()
  if (options.faults !== undefined) await installFaults(target, options.faults)
  const checks = runOrder(
    registry().filter((c) => selected(options, c)),
    target.hasControl
  )
  options.onStart?.({ layout, checks: checks.length })
  const startMs = await target.nowOnTarget()
  const startedAt = isoAt(startMs)
  const replay = replayCommand(options)
  let partners = 0
  const made = await createPartner(target, options.seed, partners++)
  const credentials: Credentials = made ?? { sandboxKey: options.sandboxKey, liveKey: options.liveKey }
  const keepsNoState = checks.some((c) => BEHAVIOUR_SUITE.test(c.suite))
    ? await statelessness(target, credentials, `${options.seed}-${startMs.toString(36)}`)
    : undefined
  /** The last X-RateLimit-Remaining seen per environment: below a margin, the window is let pass before the next call. */
  const remaining = new Map<string, number>()
  const keyed: ContractContext["keyed"] = async (env, method, path, init = {}) => {
    const left = remaining.get(env)
    if (left !== undefined && left < 3) {
      await target.wait(RATE_WINDOW_WAIT_MS, `the ${env} rate-limit window to start over (${left} requests left in it)`)
      remaining.delete(env)
    }
    let x = await target.call(method, path, init)
    if (x.status === 429) {
      // Someone else's calls filled the window: wait it out once (Retry-After, at most a window) and send again.
      const after = Number(x.responseHeaders.get("retry-after") ?? "61")
      const ms = Math.min(RATE_WINDOW_WAIT_MS, (Number.isFinite(after) && after >= 0 ? after + 1 : 61) * 1000)
      await target.wait(ms, `the ${env} rate-limit window to start over (429 with Retry-After ${x.responseHeaders.get("retry-after") ?? "missing"})`)
      x = await target.call(method, path, init)
    }
    const rate = rateOf(x.responseHeaders)
    if (rate !== undefined) remaining.set(env, rate.remaining)
    return x
  }
  const ctx: RunContext = {
    target,
    credentials,
    seed: options.seed,
    keyed,
    freshPartner: () => createPartner(target, options.seed, partners++),
    wire: {
      base: options.base,
      adminToken: options.adminToken,
      sandboxKey: credentials.sandboxKey,
      liveKey: credentials.liveKey,
      fetch: options.fetch,
      pathOf: target.actualPath
    },
    startedAt: startMs,
    now: options.now
  }
  const results: Array<CheckResult> = []
  let spent = 0
  for (const [index, check] of checks.entries()) {
    const before = options.now()
    let outcome: Outcome
    try {
      outcome =
        keepsNoState !== undefined && BEHAVIOUR_SUITE.test(check.suite)
          ? { status: "skipped", message: "the target keeps no state (said at the top of the report)", exchanges: [] }
          : await check.run(ctx)
    } catch (error) {
      outcome = { status: "failed", message: `the check could not run: ${String((error as Error)?.message ?? error).split("\n")[0]}`, exchanges: [] }
    }
    const durationMs = Math.max(0, options.now() - before)
    spent += durationMs
    results.push(toResult(check, outcome, durationMs, target, replay))
    const failed = results.filter((r) => r.status === "failed").length
    const skipped = results.filter((r) => r.status === "skipped").length
    options.onProgress?.({
      done: index + 1,
      total: checks.length,
      failed,
      skipped,
      etaMs: Math.round((spent / (index + 1)) * (checks.length - index - 1)),
      current: check.name
    })
  }
  await target.syncClock()
  const faultsMet = options.faults === undefined ? [] : await faultNotes(target)
  if (options.onHistory !== undefined) results.push(...historyChecks(history, `npx sokoni history check ${shellQuote(options.historyFile ?? "FILE")}`))
  return {
    tool: replay,
    seed: options.seed,
    target: options.base,
    startedAt,
    finishedAt: isoAt(await target.nowOnTarget()),
    checks: results,
    coverage: coverageOf(results),
    notes: [...(keepsNoState === undefined ? [] : [keepsNoState]), ...runNotes(target), ...modeCoverage(results, target.hasControl), ...faultsMet]
  }
}

/** The longest conform waits for a rate-limit window to start over (the API's window is 60 s). */
const RATE_WINDOW_WAIT_MS = 61_000

/** What the report says once at the top: how the target's clock stands against conform's. */
const runNotes = (target: Target): ReadonlyArray<string> => {
  const skew = target.clockSkew()
  if (target.hasControl || skew === undefined) return []
  return [
    `clock skew: the target's clock is ${describeSkew(skew.ms)} conform's (±${skew.uncertaintyMs} ms, from ${skew.source}); instants in this report are on the target's clock`
  ]
}

/** What a skip tells the reader again and again; said once, after the groups. */
const toResult = (check: RegisteredCheck, outcome: Outcome, durationMs: number, target: Target, replay: string): CheckResult => {
  const failing: Exchange | undefined = outcome.status === "failed" ? (outcome.failing ?? outcome.exchanges[outcome.exchanges.length - 1]) : undefined
  return {
    suite: check.suite,
    name: check.name,
    ...(check.operation === undefined ? {} : { operation: check.operation }),
    status: outcome.status,
    durationMs,
    ...(outcome.message === undefined ? {} : { message: outcome.message }),
    ...(failing === undefined ? {} : { reproducer: target.curlOf(failing) }),
    ...(outcome.status === "failed" ? { replay: `${replay} --only ${check.id === "scenario" ? shellQuote(check.name) : check.id}` } : {}),
    timeline: outcome.timeline ?? target.timelineOf(outcome.exchanges)
  }
}
