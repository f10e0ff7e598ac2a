// Sites: the organisation's sites, paged (GET /api/sites), each linking to its site page.
import type { Site as SiteSummary } from '../api-types.ts'
import type { Page } from '../context.ts'
import { field, h, select, table } from '../dom.ts'
import { pager, type PageOf } from '../paging.ts'

export const page: Page = async (root, ctx) => {
  const status = select(
    'status',
    [
      ['', 'Any status'],
      ['0', 'Planned'],
      ['1', 'Commissioning'],
      ['2', 'Operational'],
      ['3', 'Maintenance'],
      ['4', 'Standby'],
      ['5', 'Decommissioned'],
    ],
    ctx.query.get('status') ?? '',
  )
  const filters = h('form', { class: 'filters', role: 'search', 'aria-label': 'Filter sites' }, field('Status', status))
  root.append(h('h1', {}, 'Sites'), filters)
  const list = h('section', { 'aria-label': 'Sites' })
  root.append(list)
  const sites = pager<SiteSummary>(
    list,
    'Sites',
    (cursor) => ctx.api.get<PageOf<SiteSummary>>('/api/sites', { limit: 25, cursor, status: status.value || undefined }),
    (items) =>
      table(
        'Sites',
        ['Code', 'Name', 'Location', 'Time zone', 'Status'],
        items.map((s) => [h('a', { href: `/sites/${encodeURIComponent(s.code)}` }, s.code), s.name, s.location ?? '—', s.timeZone, s.statusName]),
        { empty: 'No sites yet. Sites are created through the API (POST /api/sites).' },
      ),
  )
  status.addEventListener('change', () => {
    void sites.first()
  })
  filters.addEventListener('submit', (e) => e.preventDefault())
  await sites.reload()
}
