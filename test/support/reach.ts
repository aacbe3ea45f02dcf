/**
 * A model test's reach, checked without flaking. The seed is random (printed, replayable), so a rare answer can fall
 * short of its share by chance: 5 where more than 5 are asked of 500 runs. While any is short, `more(batch)` runs
 * more sequences from derived seeds (at most `batches` times), adding to the same counts; only then is each asserted.
 * A generator that no longer reaches an answer (the regression the check is for) stays short however many runs it
 * gets, so it still fails.
 */
import { expect } from "vitest"

export const expectReach = async (
  outcomes: ReadonlyMap<string, number>,
  wanted: ReadonlyArray<readonly [key: string, moreThan: number]>,
  more: (batch: number) => Promise<unknown>,
  batches = 4
) => {
  const short = () => wanted.filter(([key, least]) => (outcomes.get(key) ?? 0) <= least)
  for (let batch = 1; batch <= batches && short().length > 0; batch++) await more(batch)
  for (const [key, least] of wanted) expect(outcomes.get(key) ?? 0, key).toBeGreaterThan(least)
}
