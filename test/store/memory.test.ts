import { MemoryStoreLayer } from "../../engine/store/memory.ts"
import { storeContract } from "./store-contract.ts"

storeContract("memory store", MemoryStoreLayer)
