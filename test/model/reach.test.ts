/**
 * The model tests' reach check (test/support/reach.ts): a rare answer short of its share by chance gets more runs
 * before the check is made, and an answer the generator cannot reach still fails it after the last batch.
 */
import { describe, expect, it } from "vitest"
import { expectReach } from "../support/reach.ts"

describe("the reach check of a model test", () => {
  it("runs more sequences while an answer is short, and passes once it is reached", async () => {
    const outcomes = new Map([
      ["fill", 9],
      ["reject", 5]
    ])
    const batches: Array<number> = []
    await expectReach(
      outcomes,
      [
        ["fill", 5],
        ["reject", 5]
      ],
      async (batch) => {
        batches.push(batch)
        outcomes.set("reject", (outcomes.get("reject") ?? 0) + 1)
      }
    )
    expect(batches).toEqual([1])
  })

  it("runs nothing more when every answer is reached", async () => {
    let more = 0
    await expectReach(new Map([["fill", 6]]), [["fill", 5]], async () => {
      more++
    })
    expect(more).toBe(0)
  })

  it("fails, naming the answer, when it is still short after the last batch", async () => {
    const batches: Array<number> = []
    await expect(
      expectReach(new Map([["fill", 2]]), [["fill", 5]], async (batch) => {
        batches.push(batch)
      })
    ).rejects.toThrow(/fill/)
    expect(batches).toEqual([1, 2, 3, 4])
  })
})
