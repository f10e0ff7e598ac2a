// "Which side last changed it" (issue 26): one GET /api/link/last-change per table and page of records, shown as
// "Last changed on site server Pit 3, 5 min ago". 'here' reads as the cloud in the cloud console and as this site
// server in a site's console.
import type { LastChange, LastChanges } from './api-types.ts'
import type { PageContext } from './context.ts'
import { h } from './dom.ts'

const relative = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' })

/** "5 min ago", "2 hours ago", "3 days ago" (the exact time is in the <time> element's title). */
export function ago(iso: string, now = Date.now()): string {
  const seconds = Math.round((Date.parse(iso) - now) / 1000)
  const abs = Math.abs(seconds)
  if (abs < 45) return relative.format(seconds, 'second')
  if (abs < 45 * 60) return relative.format(Math.round(seconds / 60), 'minute')
  if (abs < 22 * 3600) return relative.format(Math.round(seconds / 3600), 'hour')
  return relative.format(Math.round(seconds / 86_400), 'day')
}

export function sideOf(change: LastChange, mode: 'cloud' | 'site'): string {
  if (change.origin === 'siteServer') return `on site server ${change.serverName ?? change.serverId ?? '?'}`
  if (change.origin === 'cloud' || mode === 'cloud') return 'in the cloud'
  return 'on this site server'
}

/** The sentence for one record; `null` (no change recorded since the link's outbox exists) says so. */
export function lastChangeText(change: LastChange | null, mode: 'cloud' | 'site'): HTMLElement {
  if (change === null) return h('span', { class: 'last-change hint', 'data-origin': 'none' }, 'No change recorded since the link was set up')
  const verb = change.op === 'delete' ? 'Deleted' : 'Last changed'
  return h(
    'span',
    { class: 'last-change', 'data-origin': change.origin },
    `${verb} ${sideOf(change, mode)}, `,
    h('time', { datetime: change.at, title: change.at }, ago(change.at)),
  )
}

/**
 * Fills the placeholders (`[data-last-change]` holding the key as JSON) inside `scope` with the answer for `table`,
 * in one call. Best effort: a failure leaves a dash (the page itself does not depend on it).
 */
export async function fillLastChanges(ctx: PageContext, scope: HTMLElement, table: string): Promise<void> {
  const slots = [...scope.querySelectorAll<HTMLElement>('[data-last-change]')]
  if (slots.length === 0) return
  const query = new URLSearchParams({ table })
  for (const slot of slots.slice(0, 100)) query.append('key', slot.dataset.lastChange!)
  try {
    const answer = await ctx.api.get<LastChanges>(`/api/link/last-change?${query}`)
    const byKey = new Map(answer.items.map((item) => [JSON.stringify(item.key), item.change]))
    for (const slot of slots) {
      const change = byKey.get(slot.dataset.lastChange!)
      slot.replaceChildren(change === undefined ? '—' : lastChangeText(change, ctx.mode))
    }
  } catch {
    for (const slot of slots) slot.textContent = '—'
  }
}

/** A placeholder for one record's key, filled by fillLastChanges. */
export const lastChangeSlot = (key: Array<string | number>) => h('span', { 'data-last-change': JSON.stringify(key) }, '…')
