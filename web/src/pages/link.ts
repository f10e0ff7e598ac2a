// Cloud link (a site server's console; issue 26): whether this server is enrolled, with which cloud and sites, the
// link's state, last contact and last error, what waits to go up, and the conflicts the cloud recorded (read-only:
// the cloud decides; admins see them, as the API allows). Refreshed every few seconds while the page is open.
import type { LinkConflict, LinkStatus } from '../api-types.ts'
import type { Page, PageContext } from '../context.ts'
import { clear, h, messageOf, time, type Child } from '../dom.ts'
import { backlogText, conflictCard } from '../fleet-view.ts'
import { ago } from '../last-change.ts'
import type { PageOf } from '../paging.ts'

export const POLL_MS = 5000

const STATE_LABEL: Record<string, string> = {
  unenrolled: 'Not enrolled',
  starting: 'Starting',
  online: 'Online',
  offline: 'Offline (the cloud cannot be reached; this server keeps working and sends everything when it returns)',
  revoked: 'Revoked in the cloud (enrol again with a new code)',
  version: 'Refused: the cloud runs another version',
  diverged: 'Diverged: this server was restored from an old backup and must be reseeded',
  refused: 'Refused by the cloud',
  stopped: 'Not running in this process',
}

const isAdmin = (ctx: PageContext) => ctx.principal.role === 'owner' || ctx.principal.role === 'admin'

function figures(pairs: Array<[string, Child]>): HTMLDListElement {
  const dl = h('dl', { class: 'figures' })
  for (const [term, value] of pairs) dl.append(h('dt', {}, term), h('dd', {}, value))
  return dl
}

function statusPanel(s: LinkStatus): HTMLElement {
  if (!s.enrolled) {
    return h(
      'div',
      { 'data-link-state': s.state },
      h('p', {}, 'This site server is not linked to a cloud. It runs on its own.'),
      h(
        'p',
        { class: 'hint' },
        'To link it, an organisation admin registers it in the cloud console (Fleet), then runs the command shown there on this server: ',
        h('code', {}, 'sitegrid link enrol --cloud https://… --code …'),
      ),
    )
  }
  return h(
    'div',
    { 'data-link-state': s.state },
    figures([
      ['State', h('span', { class: `link-state link-state-${s.state}` }, STATE_LABEL[s.state] ?? s.state)],
      ['Cloud', s.cloudUrl ? h('span', { class: 'mono' }, s.cloudUrl) : '—'],
      ['Site server id', h('span', { class: 'mono' }, s.serverId ?? '—')],
      ['Sites', s.sites.join(', ') || '—'],
      ['Enrolled', time(s.enrolledAt)],
      ['Last contact', s.lastContactAt ? h('span', {}, time(s.lastContactAt), ` (${ago(s.lastContactAt)})`) : 'Never'],
      ['Last error', s.lastError ? h('span', { class: 'warn-text' }, s.lastError) : '—'],
      ['Waiting to go up', backlogText(s.up)],
      ['Unresolved conflicts', h('span', { 'data-unresolved': String(s.unresolvedConflicts) }, String(s.unresolvedConflicts))],
    ]),
  )
}

export const page: Page = async (root, ctx) => {
  root.append(h('h1', {}, 'Cloud link'))
  const statusBox = h('section', { 'aria-labelledby': 'link-status-heading' }, h('h2', { id: 'link-status-heading' }, 'Link'))
  const statusBody = h('div', { 'aria-live': 'polite' })
  const updated = h('p', { class: 'hint', 'aria-live': 'off' })
  statusBox.append(statusBody, updated)
  const conflictsBox = h('section', { 'aria-labelledby': 'link-conflicts-heading' }, h('h2', { id: 'link-conflicts-heading' }, 'Conflicts'))
  const conflictsBody = h('div', {})
  conflictsBox.append(
    h(
      'p',
      { class: 'hint' },
      "A change made here to a record the cloud had changed too is not applied: the cloud's version wins and comes down, and the version made here is kept as a conflict that an organisation admin reviews in the cloud console.",
    ),
    conflictsBody,
  )
  root.append(statusBox, conflictsBox)

  let stopped = false
  let serverId: string | null = null
  async function refresh(): Promise<void> {
    try {
      const status = await ctx.api.get<LinkStatus>('/api/link')
      if (stopped) return
      serverId = status.serverId
      clear(statusBody)
      statusBody.append(statusPanel(status))
      updated.textContent = `Updated ${new Date().toLocaleTimeString()}`
    } catch (error) {
      if (!stopped) updated.textContent = `Could not refresh: ${messageOf(error)}`
    }
  }

  async function loadConflicts(): Promise<void> {
    if (!isAdmin(ctx)) {
      conflictsBody.replaceChildren(h('p', { class: 'hint' }, 'Site admins and owners see the conflict records.'))
      return
    }
    try {
      const list = await ctx.api.get<PageOf<LinkConflict>>('/api/link/conflicts', { unresolved: true, limit: 50 })
      conflictsBody.replaceChildren(
        list.items.length === 0
          ? h('p', { class: 'empty' }, 'No unresolved conflicts.')
          : h(
              'div',
              { class: 'conflicts' },
              ...list.items.map((c) => conflictCard(c, c.serverId === serverId ? 'this site server' : `site server ${c.serverId}`)),
            ),
      )
    } catch (error) {
      conflictsBody.replaceChildren(h('p', { class: 'form-error', role: 'alert' }, messageOf(error)))
    }
  }

  const timer = setInterval(() => {
    if (document.visibilityState === 'visible') void refresh()
  }, POLL_MS)
  await refresh()
  await loadConflicts()
  return () => {
    stopped = true
    clearInterval(timer)
  }
}
