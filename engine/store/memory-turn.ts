/**
 * The memory store's one-at-a-time rule for write transactions (memory.ts): a turn taken at once, without a step of
 * the effect runtime, when no transaction holds it and none waits; a queue, first come first served, otherwise.
 * Effect's one-permit semaphore gave the same order for five steps per transaction (its uninterruptible mask, the
 * take, the restore, the exit hook, the restore's return), about 10% of a simulated week's steps (issue 25, E-460).
 *
 * Who holds the turn is the holder's token (its overlay), so the caller's one exit handler gives it back only when it
 * holds it: a fiber interrupted while it waits, or before it took its turn, leaves it as it was.
 */
import { Effect, Fiber } from "effect"

export interface Turn {
  /** Takes the turn for `token` now when it is free and nobody waits; false otherwise (then `wait`). */
  readonly tryTake: (token: object) => boolean
  /** Waits in line and takes the turn for `token`; interrupted, it leaves the line. */
  readonly wait: (token: object) => Effect.Effect<void>
  /** Gives the turn back if `token` holds it, and wakes the first in line. */
  readonly release: (token: object) => void
}

interface Waiter {
  wake: (() => void) | undefined
}

export const makeTurn = (): Turn => {
  let holder: object | undefined
  const line: Array<Waiter> = []

  /** Wakes the first in line, on a later task as the semaphore did: the releasing fiber finishes its own run first. */
  const wakeFirst = () => {
    if (line.length === 0 || holder !== undefined) return
    const wake = () => {
      const first = line[0]
      if (first === undefined || holder !== undefined) return
      const resume = first.wake
      first.wake = undefined
      resume?.()
    }
    const fiber = Fiber.getCurrent()
    if (fiber === undefined) queueMicrotask(wake)
    else fiber.currentDispatcher.scheduleTask(wake, 0)
  }

  const tryTake = (token: object) => {
    if (holder !== undefined || line.length > 0) return false
    holder = token
    return true
  }

  const leave = (waiter: Waiter) => {
    const at = line.indexOf(waiter)
    if (at === -1) return
    line.splice(at, 1)
    // The first in line left (interrupted): the next one may take a free turn.
    if (at === 0) wakeFirst()
  }

  const wait = (token: object): Effect.Effect<void> => {
    const waiter: Waiter = { wake: undefined }
    // The turn is taken only here, synchronously, when the waiter runs first in line and the turn is free; a wake that
    // finds it taken again (a newcomer cannot take it while anyone waits, so only an interrupted leave) waits again.
    const turn: Effect.Effect<void> = Effect.flatMap(
      Effect.callback<void>((resume) => {
        if (holder === undefined && line[0] === waiter) resume(Effect.void)
        else waiter.wake = () => resume(Effect.void)
      }),
      () => {
        if (holder !== undefined || line[0] !== waiter) return turn
        line.shift()
        holder = token
        return Effect.void
      }
    )
    // Whatever ends the wait but the turn (an interruption) takes the waiter out of the line.
    return Effect.onExit(
      Effect.suspend(() => {
        line.push(waiter)
        return turn
      }),
      () => Effect.sync(() => leave(waiter))
    )
  }

  const release = (token: object) => {
    if (holder !== token) return
    holder = undefined
    wakeFirst()
  }

  return { tryTake, wait, release }
}
