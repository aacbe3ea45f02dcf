/**
 * Key routes (contract tag "Keys"): the data key. KeyService does the work; the gateway already refuses data keys
 * and the sandbox (the contract's security and x-environments).
 */
import { KeyService } from "../../app/keys/service.ts"
import { partnerRoute } from "../route.ts"

export const keyRoutes = [
  partnerRoute("rotateDataKey", 201, {
    handle: ({ principal }) => KeyService.use((k) => k.rotateDataKey(principal))
  })
]
