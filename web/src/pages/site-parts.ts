// Small pieces the site page and its sections (and the sites list) share.
import { SITE_STATUS } from '../../../src/modules/sites/codes.ts'
import type { Site } from '../api-types.ts'
import type { PageContext } from '../context.ts'
import { field, h, select, type Child } from '../dom.ts'

export const sitePath = (code: string) => `/api/sites/${encodeURIComponent(code)}`

/** A figure with its unit, or a dash when there is none. */
export const num = (value: number | null, unit: string, digits = 2) => (value === null ? '—' : `${Number(value.toFixed(digits))} ${unit}`)

/** A definition list of label–value pairs. */
export function figures(pairs: Array<[string, Child]>): HTMLDListElement {
  const dl = h('dl', { class: 'figures' })
  for (const [term, value] of pairs) dl.append(h('dt', {}, term), h('dd', {}, value))
  return dl
}

/** The site `status` codes as select options (their names are the API's, from its code table). */
export const SITE_STATUS_OPTIONS: Array<[string, string]> = SITE_STATUS.map((s) => [String(s.code), s.name])

/** Roles the API lets write (policy `admin`): the console offers the write buttons to them only. */
export const isAdmin = (ctx: PageContext) => ctx.principal.role === 'owner' || ctx.principal.role === 'admin'

/** The fields of a site's create (with `code`) or edit form, filled from `site` when editing. */
export function siteFormFields(site?: Site): HTMLElement[] {
  const text = (name: string, value: string | null | undefined, extra: Record<string, string | boolean> = {}) =>
    h('input', { type: 'text', name, value: value ?? '', autocomplete: 'off', ...extra })
  const status = select('status', SITE_STATUS_OPTIONS, String(site?.status ?? 0))
  const description = h('textarea', { name: 'description', rows: 3 })
  description.value = site?.description ?? ''
  return [
    site
      ? null
      : field('Code', text('code', '', { required: true, spellcheck: 'false', autocapitalize: 'none' }), {
          pointer: '/code',
          hint: 'Letters, digits, - and _; fixed once created.',
        }),
    field('Name', text('name', site?.name, { required: true }), { pointer: '/name' }),
    field('Location', text('location', site?.location), { pointer: '/location' }),
    field('Time zone', text('timeZone', site?.timeZone, { spellcheck: 'false' }), {
      pointer: '/timeZone',
      hint: 'IANA name, e.g. Australia/Sydney; local historian times and alarm shifts use it. Empty on create: UTC.',
    }),
    field('Status', status, { pointer: '/status' }),
    field('Description', description, { pointer: '/description' }),
  ].filter((el): el is HTMLDivElement => el !== null)
}
