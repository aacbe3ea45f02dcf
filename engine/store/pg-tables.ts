/**
 * Where the postgres adapter keeps each collection: the money path's collections in tables of their own, with typed
 * columns the database can index and constrain, every other collection in the generic `documents` table. Owns: the
 * collection -> table routing, each typed table's columns and how they are read off a document on write, and the
 * SQL text of get / put / list on a table. Does not own the tables' DDL (migrations/), nor transactions or locking.
 *
 * The body text stays what the adapter returns: the typed columns are copies, taken from the body by the same write
 * (one statement, so no extra round trip), for the database's constraints and for people inspecting a run with SQL
 * (docs/storage.md). A value of the wrong type gives NULL in its column, never a failed write, except where a
 * constraint says NOT NULL (a balance's account and cents, a journal entry's position and kind, a receipt's key).
 */
import type { Doc } from "./port.ts"

/** A typed column: its name and how its value is read off a document. */
export interface Column {
  readonly name: string
  readonly of: (doc: Doc, body: Record<string, unknown>) => string | number | boolean | null
}

export interface Table {
  /** The SQL table. */
  readonly name: string
  /** The collection stored in it (absent for `documents`, which holds every other collection). */
  readonly collection?: string
  readonly columns: ReadonlyArray<Column>
}

/** The partition's root (`partnerId:environment`), before any `/child` or `|side` suffix. */
const rootOf = (partition: string): string => {
  const end = partition.search(/[/|]/)
  return end === -1 ? partition : partition.slice(0, end)
}

/** The partner of a partition, or null for "global". */
export const partnerIdOf = (partition: string): string | null => {
  const root = rootOf(partition)
  if (root === "global") return null
  const colon = root.indexOf(":")
  return colon === -1 ? root : root.slice(0, colon)
}

/** The environment of a partition (`sandbox`, `production`), or null when it names none. */
export const environmentOf = (partition: string): string | null => {
  const root = rootOf(partition)
  const colon = root.indexOf(":")
  return colon === -1 ? null : root.slice(colon + 1)
}

const text =
  (field: string): Column["of"] =>
  (_doc, body) => {
    const value = body[field]
    return typeof value === "string" ? value : null
  }

/** A safe integer (cents, ms, positions), else NULL: bigint columns never see a fraction. */
const integer =
  (field: string): Column["of"] =>
  (_doc, body) => {
    const value = body[field]
    return typeof value === "number" && Number.isSafeInteger(value) ? value : null
  }

/** Any finite number (a quantity), for a numeric column. */
const decimal =
  (field: string): Column["of"] =>
  (_doc, body) => {
    const value = body[field]
    return typeof value === "number" && Number.isFinite(value) ? value : null
  }

const col = (name: string, of: Column["of"]): Column => ({ name, of })

/** When the API can no longer return the document (E-400, migration 0013): `dropExpired` removes it from then on. */
const keepColumn = col("keep_until", (doc) => (doc.keepUntil !== undefined && Number.isSafeInteger(doc.keepUntil) ? doc.keepUntil : null))

/** Columns every table has, documents included (after `id`, `partition`, sort keys, insert_seq and body). */
const partnerColumns: ReadonlyArray<Column> = [
  col("partner_id", (doc) => partnerIdOf(doc.partition)),
  col("environment", (doc) => environmentOf(doc.partition)),
  keepColumn
]

export const DOCUMENTS: Table = { name: "documents", columns: [keepColumn] }

export const ORDERS: Table = {
  name: "orders",
  collection: "orders",
  columns: [
    ...partnerColumns,
    col("account", text("account")),
    col("symbol", text("symbol")),
    col("side", text("side")),
    col("order_type", text("orderType")),
    col("status", text("status")),
    col("settlement_status", text("settlementStatus")),
    col("quantity", decimal("quantity")),
    col("limit_price_e4", integer("limitPrice")),
    col("stop_price_e4", integer("stopPrice")),
    col("gross_cents", integer("gross")),
    col("fee_cents", integer("fee")),
    col("total_cents", integer("totalAmount")),
    col("escrow_cents", integer("escrow")),
    col("client_order_id", text("clientOrderId")),
    col("quote_id", text("quoteId")),
    col("created_at", integer("createdAt")),
    col("filled_at", integer("filledAt")),
    col("cancelled_at", integer("cancelledAt")),
    col("version", integer("version"))
  ]
}

export const LEDGER_BALANCES: Table = {
  name: "ledger_balances",
  collection: "balances",
  columns: [...partnerColumns, col("account", text("account")), col("cents", integer("cents")), col("updated_at", integer("updatedAt"))]
}

export const LEDGER_ENTRIES: Table = {
  name: "ledger_entries",
  collection: "journal",
  columns: [
    ...partnerColumns,
    col("seq", integer("seq")),
    col("at", integer("at")),
    col("kind", text("kind")),
    col("order_id", text("orderId")),
    col("subscription_id", text("subscriptionId")),
    col("side", text("side")),
    col("reference", text("reference")),
    col("description", text("description"))
  ]
}

export const WALLET_TRANSACTIONS: Table = {
  name: "wallet_transactions",
  collection: "walletTxns",
  columns: [
    ...partnerColumns,
    col("transaction_id", text("transactionId")),
    col("sub_account_id", text("subAccountId")),
    col("type", text("type")),
    col("cents", integer("cents")),
    col("balance_after", integer("balanceAfter")),
    col("order_id", text("orderId")),
    col("at", integer("at")),
    col("seq", integer("seq"))
  ]
}

/** The key of a receipt stored under `partition|key` (app: Idempotency's recordId). */
const receiptKeyOf = (doc: Doc): string => (doc.id.startsWith(`${doc.partition}|`) ? doc.id.slice(doc.partition.length + 1) : doc.id)

export const IDEMPOTENCY_RECEIPTS: Table = {
  name: "idempotency_receipts",
  collection: "idempotency",
  columns: [
    ...partnerColumns,
    col("idempotency_key", receiptKeyOf),
    col("fingerprint", text("fingerprint")),
    col("status", integer("status")),
    col("state", text("state")),
    col("stored_at", integer("storedAt"))
  ]
}

export const TYPED_TABLES: ReadonlyArray<Table> = [ORDERS, LEDGER_BALANCES, LEDGER_ENTRIES, WALLET_TRANSACTIONS, IDEMPOTENCY_RECEIPTS]

const byCollection = new Map(TYPED_TABLES.map((table) => [table.collection as string, table]))

/** The table a collection is stored in. */
export const tableOf = (collection: string): Table => byCollection.get(collection) ?? DOCUMENTS

/** The version of the body's shape each row records (`shape_version`): a later shape migrates rows by it. */
export const SHAPE_VERSION = 1

const bodyRecord = (body: unknown): Record<string, unknown> =>
  typeof body === "object" && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : {}

/** The typed columns' values of `doc`, in `table.columns` order. */
export const columnValues = (table: Table, doc: Doc): ReadonlyArray<string | number | boolean | null> => {
  const body = bodyRecord(doc.body)
  return table.columns.map((column) => column.of(doc, body))
}

export interface Statement {
  readonly text: string
  readonly params: ReadonlyArray<unknown>
}

/** Numbers parameters in the order they are used: `$1`, `$2`, ... */
const parameters = () => {
  const params: Array<unknown> = []
  return {
    params,
    add: (value: unknown) => {
      params.push(value)
      return `$${params.length}`
    }
  }
}

/** `WHERE` of the rows of `collection` in `table`: documents share one table, so there the collection is a key too. */
const collectionFilter = (table: Table, add: (value: unknown) => string, collection: string) =>
  table.collection === undefined ? `collection = ${add(collection)} AND ` : ""

const COLUMNS = "id, partition, sort_key, body"

/**
 * Statement texts, built once per shape: the driver keeps a connection's prepared statements by text and parameter
 * types, so a text built per call costs JavaScript work and a varying one costs the server a parse and a plan.
 */
const texts = new Map<string, string>()
const cachedText = (key: string, build: () => string): string => {
  let text = texts.get(key)
  if (text === undefined) {
    text = build()
    texts.set(key, text)
  }
  return text
}

export const getStatement = (collection: string, id: string): Statement => {
  const table = tableOf(collection)
  const text = cachedText(`get|${table.name}`, () => {
    const { add } = parameters()
    return `SELECT ${COLUMNS} FROM ${table.name} WHERE ${collectionFilter(table, add, collection)}id = ${add(id)}`
  })
  return { text, params: table.collection === undefined ? [collection, id] : [id] }
}

export interface ListQuery {
  readonly partition: string
  readonly order: "asc" | "desc"
  /** The sort order (hex code units) of the exclusive bound, if any. */
  readonly after: string | undefined
  readonly limit: number | undefined
}

export const listStatement = (collection: string, query: ListQuery): Statement => {
  const table = tableOf(collection)
  const { params, add } = parameters()
  const where = `${collectionFilter(table, add, collection)}partition = ${add(query.partition)}`
  const after = query.after === undefined ? "" : `AND sort_order ${query.order === "asc" ? ">" : "<"} ${add(query.after)}`
  const limit = query.limit === undefined ? "" : `LIMIT ${add(query.limit)}`
  const text = cachedText(`list|${table.name}|${query.order}|${after === ""}|${limit === ""}`, () => {
    return `SELECT ${COLUMNS} FROM ${table.name} WHERE ${where} ${after} ORDER BY sort_order ${query.order}, insert_seq ${query.order} ${limit}`
  })
  return { text, params }
}

/** Deletes up to `limit` of a partition's rows of `collection` whose keep_until is at or before `upTo`, earliest first. */
export const dropExpiredStatement = (collection: string, partition: string, upTo: number, limit: number): Statement => {
  const table = tableOf(collection)
  const { params, add } = parameters()
  const where = `${collectionFilter(table, add, collection)}partition = ${add(partition)} AND keep_until <= ${add(upTo)}`
  const rows = `SELECT id FROM ${table.name} WHERE ${where} ORDER BY keep_until, id COLLATE "C" LIMIT ${add(limit)}`
  return { text: `DELETE FROM ${table.name} WHERE ${collectionFilter(table, add, collection)}id IN (${rows}) RETURNING id`, params }
}

/**
 * The one statement that writes `doc` (body text `body`, sort order `sortOrder`) with its typed columns; a journal
 * entry's postings go to `ledger_postings` in the same statement, so posting an entry stays one round trip.
 */
export const putStatement = (collection: string, doc: Doc, sortOrder: string, body: string | null): Statement => {
  const table = tableOf(collection)
  // Typed values bind as text (or NULL), which the server reads as the column's type: one parameter type list for
  // every row, so one prepared statement per table (a number binds as int4, int8 or float8 by its size, NULL untyped).
  const typed = columnValues(table, doc).map((value) => (value === null ? null : String(value)))
  const params = [...(table.collection === undefined ? [collection] : []), doc.id, doc.partition, doc.sortKey, sortOrder, body, ...typed]
  if (table === LEDGER_ENTRIES) params.push(JSON.stringify(bodyRecord(doc.body).postings ?? []))
  return { text: cachedText(`put|${table.name}`, () => putText(table)), params }
}

/**
 * The pieces of the upsert of a row of `table`, the value of each column given by `value` (a parameter, or a field of
 * the apply function's row: pg-batch.ts), so both writers keep one text of the rule.
 */
export const upsertParts = (table: Table, value: (column: string) => string) => {
  const typed = table.columns.map((c) => c.name)
  const own = table.collection === undefined ? ["collection"] : []
  const columns = [...own, "id", "partition", "sort_key", "sort_order", "insert_seq", "body", "shape_version", ...typed]
  const values = [
    ...own.map(value),
    value("id"),
    value("partition"),
    value("sort_key"),
    value("sort_order"),
    "nextval('documents_insert_seq')",
    value("body"),
    String(SHAPE_VERSION),
    ...typed.map(value)
  ]
  const conflict = table.collection === undefined ? "(collection, id)" : "(id)"
  const set = ["partition", "sort_key", "sort_order", "body", "shape_version", ...typed].map((c) => `${c} = EXCLUDED.${c}`)
  // A doc that stays in its partition keeps its place among equal sort keys; one that moves goes last.
  const updates = `${set.join(", ")},
      insert_seq = CASE WHEN t.partition = EXCLUDED.partition THEN t.insert_seq ELSE EXCLUDED.insert_seq END`
  return { columns, values, conflict, updates }
}

const putText = (table: Table): string => {
  const { add } = parameters()
  const { columns, values, conflict, updates } = upsertParts(table, add)
  const upsert = `INSERT INTO ${table.name} AS t (${columns.join(", ")}) VALUES (${values.join(", ")})
    ON CONFLICT ${conflict} DO UPDATE SET ${updates}`
  if (table !== LEDGER_ENTRIES) return upsert
  // An entry is written once: its postings' primary key refuses a second write of it (the ledger never rewrites one).
  const postings = add("postings")
  return `WITH entry AS (${upsert} RETURNING id, partition, seq)
      INSERT INTO ledger_postings (entry_id, partition, seq, account, cents)
      SELECT entry.id, entry.partition, entry.seq, p.account, p.cents
      FROM entry, json_to_recordset(${postings}::json) AS p(account text, cents bigint)`
}

/** A put as the apply function takes it (pg-batch.ts): the same columns `putStatement` binds, as one JSON row. */
export const putRow = (collection: string, doc: Doc, sortOrder: string, body: string | null) => {
  const table = tableOf(collection)
  // The body is spliced into the row as JSON when the batch is sent (pg-batch.ts `opText`, E-437).
  const row: Record<string, unknown> = { id: doc.id, partition: doc.partition, sort_key: doc.sortKey, sort_order: sortOrder }
  if (table.collection === undefined) row.collection = collection
  const values = columnValues(table, doc)
  table.columns.forEach((column, i) => {
    row[column.name] = values[i]
  })
  // `r` last: `opText` adds the body to it.
  const op: Record<string, unknown> =
    table === LEDGER_ENTRIES ? { k: `put:${table.name}`, p: bodyRecord(doc.body).postings ?? [], r: row } : { k: `put:${table.name}`, r: row }
  return {
    op,
    json: { column: "body", text: body },
    table: table.name,
    collection: table.collection === undefined ? collection : undefined,
    put: { id: doc.id, partition: doc.partition, sortKey: doc.sortKey, body }
  }
}

/** A `dropExpired` as the apply function takes it. */
export const dropRow = (collection: string, partition: string, upTo: number, limit: number) => {
  const table = tableOf(collection)
  const op: Record<string, unknown> = { k: `drop:${table.name}`, p: partition, u: upTo, l: limit }
  if (table.collection === undefined) op.c = collection
  return { op, table: table.name, collection: table.collection === undefined ? collection : undefined }
}
