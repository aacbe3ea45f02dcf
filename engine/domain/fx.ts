/**
 * Reference FX rates (local currency units per USD) the simulator converts with. Pure data: a later issue moves
 * them onto a seeded path of their own. Does not own conversion arithmetic (money.ts).
 */
import type { Rate6 } from "./money.ts"

const RATES: Record<string, Rate6> = {
  USD: 1_000_000,
  KES: 129_250_000,
  ZAR: 17_850_000
}

export const FX_SOURCE = "sokoni-sim-reference"

export const rateFor = (currency: string): Rate6 | undefined => RATES[currency]
