/** The value at `key`, created with `make` and stored first if absent. */
export const getOrCreate = <K, V>(map: Map<K, V>, key: K, make: () => V): V => {
  const existing = map.get(key)
  if (existing !== undefined) return existing
  const created = make()
  map.set(key, created)
  return created
}
