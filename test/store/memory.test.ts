import { MemoryStoreLayer } from "../../engine/store/memory.ts"
import { nestedContract } from "./nested-contract.ts"
import { storeContract } from "./store-contract.ts"

storeContract("memory store", MemoryStoreLayer)
nestedContract("memory store: nested transactions", MemoryStoreLayer)
