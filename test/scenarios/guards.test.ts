/** The guards suite (scenarios/guards/): every file passes and replays to one trace hash on both stores. */
import { describeSuite } from "./suite.ts"

describeSuite("guards")
