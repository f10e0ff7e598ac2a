/**
 * Appends `value` to the group of `key` in `groups`, making the group on its first value. The one way rows are
 * grouped by key here: copying the group at every value (`[...group, value]`) made grouping quadratic in the rows of
 * one key.
 */
export function appendTo<K, V>(groups: Map<K, V[]>, key: K, value: V): void {
  const group = groups.get(key)
  if (group) group.push(value)
  else groups.set(key, [value])
}
