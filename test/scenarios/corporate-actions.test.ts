/** The corporate actions suite (scenarios/corporate-actions/): every file passes and replays to one trace hash on both stores. */
import { describeSuite } from "./suite.ts"

describeSuite("corporate-actions")
