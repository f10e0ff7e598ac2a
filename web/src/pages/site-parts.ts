// Small pieces the site page and its sections share.
import type { PageContext } from '../context.ts'
import { h, type Child } from '../dom.ts'

export const sitePath = (code: string) => `/api/sites/${encodeURIComponent(code)}`

/** A figure with its unit, or a dash when there is none. */
export const num = (value: number | null, unit: string, digits = 2) => (value === null ? '—' : `${Number(value.toFixed(digits))} ${unit}`)

/** A definition list of label–value pairs. */
export function figures(pairs: Array<[string, Child]>): HTMLDListElement {
  const dl = h('dl', { class: 'figures' })
  for (const [term, value] of pairs) dl.append(h('dt', {}, term), h('dd', {}, value))
  return dl
}

/** Whether the signed-in role may change the site's data (owner or admin); the API stays the authority. */
export const canEdit = (ctx: PageContext) => ctx.principal.role === 'owner' || ctx.principal.role === 'admin'
