import { MemoryStoreLayer } from "../../engine/store/memory.ts"
import { eventsContract } from "./events-contract.ts"
import { groupContract } from "./group-contract.ts"
import { nestedContract } from "./nested-contract.ts"
import { prefetchContract } from "./prefetch-contract.ts"
import { retentionContract } from "./retention-contract.ts"
import { storeContract } from "./store-contract.ts"

storeContract("memory store", MemoryStoreLayer)
nestedContract("memory store: nested transactions", MemoryStoreLayer)
eventsContract("memory store: reading the event log", MemoryStoreLayer)
retentionContract("memory store: retention", MemoryStoreLayer)
prefetchContract("memory store: hints", MemoryStoreLayer)
groupContract("memory store: grouped units", MemoryStoreLayer, false)
