// Small DOM helpers: elements are built with textContent and attributes, never from HTML strings, so data from
// the API can never become markup (the CSP forbids inline scripts as a second line of defence).
import { ApiProblem } from './context.ts'

export type Child = Node | string | number | null | undefined | false
type AttrValue = string | number | boolean | null | undefined | ((event: Event) => void)

let nextId = 0
/** A document-unique id for label/aria wiring. */
export const uid = (prefix: string) => `${prefix}-${++nextId}`

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, AttrValue> = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag)
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue
    if (typeof value === 'function') el.addEventListener(name.replace(/^on/, '').toLowerCase(), value)
    else if (name === 'class') el.className = String(value)
    else if (value === true) el.setAttribute(name, '')
    else el.setAttribute(name, String(value))
  }
  append(el, ...children)
  return el
}

export function append(el: Element, ...children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue
    el.append(child instanceof Node ? child : String(child))
  }
}

export function clear(el: Element): void {
  el.replaceChildren()
}

type Control = HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement

/**
 * A labelled control with a hint and an error line wired by aria-describedby. `pointer` is the JSON pointer of the
 * request field it edits (`/name`), so a 400 naming that field shows its message right here (showProblem).
 */
export function field(label: string, control: Control, options: { pointer?: string; hint?: string } = {}): HTMLDivElement {
  control.id ||= uid('f')
  const errorId = `${control.id}-error`
  const hintId = `${control.id}-hint`
  control.setAttribute('aria-describedby', [options.hint ? hintId : '', errorId].filter(Boolean).join(' '))
  return h(
    'div',
    { class: 'field', 'data-pointer': options.pointer },
    h('label', { for: control.id }, label),
    options.hint ? h('p', { class: 'hint', id: hintId }, options.hint) : null,
    control,
    h('p', { class: 'field-error', id: errorId, hidden: true }),
  )
}

export function select(name: string, options: Array<[value: string, label: string]>, selected?: string): HTMLSelectElement {
  const el = h('select', { name })
  for (const [value, label] of options) el.append(h('option', { value, selected: value === selected }, label))
  return el
}

/** Removes the error messages a previous showProblem left in `scope`. */
export function clearProblems(scope: Element): void {
  for (const el of scope.querySelectorAll<HTMLElement>('.field-error')) {
    el.textContent = ''
    el.hidden = true
  }
  for (const el of scope.querySelectorAll('[aria-invalid]')) el.removeAttribute('aria-invalid')
  scope.querySelector('.form-error')?.remove()
}

/**
 * Shows an error from the API in `scope` (a form): each field error next to the field its pointer names, focusing
 * the first; whatever names no field of the form (or is not a problem at all) at the top of the form, as an alert.
 * `live` (an answer to values still being typed): only the errors of the fields `live.shown` accepts, the focus and
 * the top of the form left alone.
 */
export function showProblem(scope: HTMLElement, error: unknown, live?: { shown(pointer: string): boolean }): void {
  clearProblems(scope)
  const general: string[] = []
  let first: HTMLElement | undefined
  if (error instanceof ApiProblem) {
    for (const item of error.errors) {
      if (live && !live.shown(item.pointer)) continue
      const wrapper = scope.querySelector<HTMLElement>(`[data-pointer="${CSS.escape(item.pointer)}"]`)
      const line = wrapper?.querySelector<HTMLElement>('.field-error')
      if (!wrapper || !line) {
        general.push(`${item.pointer || 'request'}: ${item.message}`)
        continue
      }
      line.textContent = line.textContent ? `${line.textContent}; ${item.message}` : item.message
      line.hidden = false
      const control = wrapper.querySelector<HTMLElement>('input, select, textarea')
      control?.setAttribute('aria-invalid', 'true')
      first ??= control ?? undefined
    }
    if (error.errors.length === 0 || general.length > 0) general.unshift(messageOf(error))
  } else {
    general.push(messageOf(error))
  }
  if (live) return
  if (general.length > 0) {
    const box = h('div', { class: 'form-error', role: 'alert' }, ...general.map((m) => h('p', {}, m)))
    // Below a dialog's title, so that the title still says what the form is.
    const title = scope.querySelector(':scope > h2')
    if (title) title.after(box)
    else scope.prepend(box)
  }
  first?.focus()
}

export function messageOf(error: unknown): string {
  if (error instanceof ApiProblem) {
    if (error.status === 403) return `Not allowed: ${error.detail ?? 'your role does not permit this.'}`
    return error.detail ?? error.message
  }
  if (error instanceof TypeError) return 'The server could not be reached. Check the connection and try again.'
  return error instanceof Error ? error.message : String(error)
}

const dateTimes = new Map<string, Intl.DateTimeFormat>()
const zoneNames = new Intl.DateTimeFormat(undefined, { timeZoneName: 'short' })
/**
 * `iso` in the viewer's locale, in `timeZone` (an IANA name; the page names it once, in its zone toggle). Without
 * one, in the browser's zone, named after the time ("… 14:05 GMT+8"): a time never reads in an unnamed zone.
 */
export function formatTime(iso: string | null | undefined, timeZone?: string): string {
  if (!iso) return '—'
  let format = dateTimes.get(timeZone ?? '')
  if (!format) {
    format = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short', timeZone })
    dateTimes.set(timeZone ?? '', format)
  }
  const at = new Date(iso)
  if (timeZone !== undefined) return format.format(at)
  const zone = zoneNames.formatToParts(at).find((p) => p.type === 'timeZoneName')?.value
  return zone ? `${format.format(at)} ${zone}` : format.format(at)
}

/**
 * A <time> element showing `iso` in the viewer's locale with the exact value in datetime; in `timeZone` when given
 * (pages pass `shownZone(site.timeZone)` from time-zone.ts, and label the zone once, in its toggle).
 */
export const time = (iso: string | null | undefined, timeZone?: string) =>
  iso ? h('time', { datetime: iso, title: iso, 'data-zone': timeZone }, formatTime(iso, timeZone)) : '—'

/** A table with a caption and column headers (scope=col); rows are arrays of cells. */
export type Row = Child[] | { attrs: Record<string, AttrValue>; cells: Child[] }

export function table(caption: string, headers: string[], rows: Row[], options: { empty?: string } = {}): HTMLElement {
  if (rows.length === 0) return h('p', { class: 'empty' }, options.empty ?? 'Nothing to show.')
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      {},
      h('caption', { class: 'visually-hidden' }, caption),
      h('thead', {}, h('tr', {}, ...headers.map((text) => h('th', { scope: 'col' }, text)))),
      h(
        'tbody',
        {},
        ...rows.map((row) => {
          const { attrs, cells } = Array.isArray(row) ? { attrs: {}, cells: row } : row
          return h('tr', attrs, ...cells.map((cell, i) => h('td', { 'data-label': headers[i] }, cell)))
        }),
      ),
    ),
  )
}

/** Copies a secret shown once; without clipboard permission (plain http on a site server) selects it for Ctrl+C. */
export async function copyShown(text: string, input: HTMLInputElement): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text)
    return true
  } catch {
    input.focus()
    input.select()
    return false
  }
}
