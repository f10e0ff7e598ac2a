// Reading a form for the API: each value is sent as the engineer typed it (no trimming, no checks of our own), so
// that the API's rules, and its messages next to the fields (dialog.ts, dom.ts showProblem), are the only ones.
// A field left empty is absent (create: the API's default or its "required" message) or null (update: cleared).

/** The text of field `name`, as typed. */
export const typed = (data: FormData, name: string): string => {
  const value = data.get(name)
  return typeof value === 'string' ? value : ''
}

/** An optional text field: absent when left empty. */
export const optional = (data: FormData, name: string): string | undefined => typed(data, name) || undefined

/** A nullable text field on an update: null when emptied, which clears it. */
export const nullable = (data: FormData, name: string): string | null => typed(data, name) || null

/** A number field: the number typed; anything else is sent as typed for the API to name the rule; empty is absent. */
export function numeric(data: FormData, name: string): number | string | undefined {
  const text = typed(data, name)
  if (text.trim() === '') return undefined
  const value = Number(text)
  return Number.isFinite(value) ? value : text
}

/** A JSON object field (tag mappings, config): the parsed value; text that is not JSON is sent as typed; empty is absent. */
export function json(data: FormData, name: string): unknown {
  const text = typed(data, name)
  if (text.trim() === '') return undefined
  try {
    return JSON.parse(text) as unknown
  } catch {
    return text
  }
}
