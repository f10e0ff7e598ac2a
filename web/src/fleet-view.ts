// Pieces the cloud's fleet page and a site server's link page share: backlog figures and a link conflict shown with
// both versions side by side.
import type { LinkConflict } from './api-types.ts'
import { h, time, type Child } from './dom.ts'
import { ago } from './last-change.ts'

export function bytes(n: number): string {
  if (n < 1024) return `${n} B`
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`
  if (n < 1024 ** 3) return `${(n / 1024 / 1024).toFixed(1)} MiB`
  return `${(n / 1024 ** 3).toFixed(2)} GiB`
}

/** `oldestAt` as the API gives it: an ISO string, or null. */
export function backlogText(b: { items?: unknown; bytes?: unknown; oldestAt?: unknown } | null | undefined): Child {
  if (!b || typeof b.items !== 'number') return h('span', { class: 'hint' }, 'Not reported yet')
  if (b.items === 0) return h('span', { 'data-backlog': '0' }, 'Nothing waiting')
  const oldest = typeof b.oldestAt === 'string' ? b.oldestAt : null
  return h(
    'span',
    { 'data-backlog': String(b.items) },
    `${b.items} change${b.items === 1 ? '' : 's'}, ${bytes(typeof b.bytes === 'number' ? b.bytes : 0)}`,
    oldest ? h('span', { class: 'hint' }, h('br'), 'oldest ', h('time', { datetime: oldest, title: oldest }, ago(oldest))) : null,
  )
}

const show = (v: unknown) => (v === undefined ? '—' : v === null ? 'null' : String(v))

/** A cell of a version: timestamps (columns named `…_at`, epoch ms) read as dates, with the stored value in the title. */
function cell(name: string, v: unknown): Child {
  if (name.endsWith('_at') && typeof v === 'number' && Number.isFinite(v)) {
    const iso = new Date(v).toISOString()
    return h('time', { datetime: iso, title: String(v) }, iso.replace('T', ' ').replace(/\.\d+Z$/, ' UTC'))
  }
  return show(v)
}

/** Which fields of the two versions differ (a field only one of them has differs too). */
export function differingFields(conflict: LinkConflict): string[] {
  const losing = conflict.losingOp === 'delete' ? {} : conflict.losingRow
  const winning = conflict.winningOp === 'upsert' && conflict.winningRow ? conflict.winningRow : {}
  const names = [...new Set([...Object.keys(losing), ...Object.keys(winning)])].filter((n) => n !== 'org_id')
  return names.filter((n) => show(losing[n]) !== show(winning[n]))
}

function versionHeading(conflict: LinkConflict, side: 'site' | 'cloud'): string {
  if (side === 'site') return conflict.losingOp === 'delete' ? "Site's version (deleted it)" : "Site's version (lost)"
  if (conflict.winningOp === 'delete') return "Cloud's version (deleted)"
  if (conflict.winningOp === null) return "Cloud's version (another record holds a unique value)"
  return "Cloud's version (kept)"
}

/** Both versions, field by field, differing fields marked. */
export function conflictVersions(conflict: LinkConflict): HTMLElement {
  const losing = conflict.losingRow
  const winning = conflict.winningRow ?? {}
  const differing = new Set(differingFields(conflict))
  const names = [...new Set([...Object.keys(losing), ...Object.keys(winning)])].filter((n) => n !== 'org_id')
  return h(
    'div',
    { class: 'table-wrap conflict-versions' },
    h(
      'table',
      {},
      h('caption', { class: 'visually-hidden' }, `Both versions of ${conflict.table} ${JSON.stringify(conflict.key)}`),
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          h('th', { scope: 'col' }, 'Field'),
          h('th', { scope: 'col' }, versionHeading(conflict, 'site')),
          h('th', { scope: 'col' }, versionHeading(conflict, 'cloud')),
        ),
      ),
      h(
        'tbody',
        {},
        ...names.map((name) =>
          h(
            'tr',
            { class: differing.has(name) ? 'differs' : '', 'data-field': name, 'data-differs': differing.has(name) ? 'true' : 'false' },
            h('th', { scope: 'row' }, name, differing.has(name) ? h('span', { class: 'differs-mark', title: 'The versions differ' }, ' ≠') : null),
            h('td', { 'data-side': 'site' }, cell(name, losing[name])),
            h('td', { 'data-side': 'cloud' }, conflict.winningOp === 'upsert' ? cell(name, winning[name]) : '—'),
          ),
        ),
      ),
    ),
  )
}

/** One conflict: what, where, who (`site server Pit 3`) and when, both versions, and `actions` (cloud: re-apply, dismiss). */
export function conflictCard(conflict: LinkConflict, who: string, actions: Child[] = []): HTMLElement {
  const differing = differingFields(conflict)
  const headingId = `conflict-${conflict.id}`
  return h(
    'article',
    { class: 'conflict', 'aria-labelledby': headingId, 'data-conflict-id': conflict.id },
    h('h3', { id: headingId }, `${conflict.table} ${conflict.key.join(' / ')}`),
    h(
      'p',
      {},
      `Site ${conflict.site}: ${who} changed it `,
      time(conflict.losingAt),
      '; recorded ',
      time(conflict.recordedAt),
      '. ',
      differing.length > 0 ? `Differs in: ${differing.join(', ')}.` : 'The versions hold the same values.',
    ),
    conflict.resolution
      ? h(
          'p',
          { class: 'hint' },
          `${conflict.resolution === 'reapplied' ? 'Re-applied' : 'Dismissed'} by ${conflict.resolvedBy ?? '?'} `,
          time(conflict.resolvedAt),
        )
      : null,
    conflictVersions(conflict),
    actions.length > 0 ? h('div', { class: 'actions' }, ...actions) : null,
  )
}
