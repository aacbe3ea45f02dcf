/**
 * The market-clock suite (market.status events, D-231, D-232): every scenario passes, replays to the same trace on
 * memory and, with DATABASE_URL, to memory's hash on postgres.
 */
import { describeSuite } from "./suite.ts"

describeSuite("market-clock")
