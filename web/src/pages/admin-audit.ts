// Audit log (organisation owners and admins): every administrative change, newest first, paged, filtered by an
// action prefix (e.g. `api_key` or `member.`).
import type { AuditEvent } from '../api-types.ts'
import type { Page } from '../context.ts'
import { clearProblems, field, h, showProblem, table, time } from '../dom.ts'
import { pager, type PageOf } from '../paging.ts'

const detailText = (detail: AuditEvent['detail']) =>
  detail === null
    ? '—'
    : Object.entries(detail)
        .map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`)
        .join('; ')

export const page: Page = async (root, ctx) => {
  const base = `/api/admin/orgs/${encodeURIComponent(ctx.org.slug)}/audit`
  const action = h('input', { type: 'search', name: 'action', autocomplete: 'off', spellcheck: 'false', value: ctx.query.get('action') ?? '' })
  const form = h(
    'form',
    { class: 'filters', role: 'search', 'aria-label': 'Filter the audit log', novalidate: true },
    field('Action starts with', action, { pointer: '/action', hint: 'e.g. api_key, member., domain.' }),
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'secondary' }, 'Filter')),
  )
  const list = h('section', { 'aria-label': 'Audit events', class: 'audit-log' })
  root.append(h('h1', {}, 'Audit log'), form, list)
  const events = pager<AuditEvent>(
    list,
    'Audit log',
    async (cursor) => {
      clearProblems(form)
      try {
        return await ctx.api.get<PageOf<AuditEvent>>(base, { limit: 50, cursor, action: action.value.trim() || undefined })
      } catch (error) {
        showProblem(form, error)
        return { items: [], nextCursor: null }
      }
    },
    (items) =>
      table(
        'Audit events, newest first',
        ['When', 'Action', 'Target', 'Actor', 'Detail'],
        items.map((e) => [time(e.at), h('code', {}, e.action), e.target, `${e.actorKind} ${e.actorId}`, detailText(e.detail)]),
        { empty: 'No audit events match.' },
      ),
  )
  form.addEventListener('submit', (event) => {
    event.preventDefault()
    void events.first()
  })
  await events.reload()
}
