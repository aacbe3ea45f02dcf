/** The faults suite (scenarios/faults/): every file passes and replays to one trace hash on both stores. */
import { describeSuite } from "./suite.ts"

describeSuite("faults")
