// Sites: the organisation's sites, paged (GET /api/sites), each linking to its site page; admins create one here
// (POST /api/sites) and land on its page.
import type { Site as SiteSummary } from '../api-types.ts'
import type { Page, PageContext } from '../context.ts'
import { openDialog } from '../dialog.ts'
import { append, field, h, select, table } from '../dom.ts'
import { optional, typed } from '../forms.ts'
import { pager, type PageOf } from '../paging.ts'
import { isAdmin, SITE_STATUS_OPTIONS, siteFormFields } from './site-parts.ts'

export const page: Page = async (root, ctx) => {
  const status = select('status', [['', 'Any status'], ...SITE_STATUS_OPTIONS], ctx.query.get('status') ?? '')
  const filters = h('form', { class: 'filters', role: 'search', 'aria-label': 'Filter sites' }, field('Status', status))
  append(
    root,
    h('h1', {}, 'Sites'),
    isAdmin(ctx)
      ? h(
          'p',
          {},
          h(
            'button',
            {
              type: 'button',
              class: 'primary',
              onclick: () => {
                void createSite(ctx)
              },
            },
            'New site',
          ),
        )
      : null,
    filters,
  )
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
        { empty: isAdmin(ctx) ? 'No sites yet: create the first with "New site".' : 'No sites yet.' },
      ),
  )
  status.addEventListener('change', () => {
    void sites.first()
  })
  filters.addEventListener('submit', (e) => e.preventDefault())
  await sites.reload()
}

async function createSite(ctx: PageContext): Promise<void> {
  let created: SiteSummary | undefined
  const done = await openDialog({
    title: 'New site',
    fields: siteFormFields(),
    submitLabel: 'Create site',
    async onSubmit(data) {
      created = await ctx.api.send<SiteSummary>('POST', '/api/sites', {
        code: typed(data, 'code'),
        name: typed(data, 'name'),
        location: optional(data, 'location'),
        timeZone: optional(data, 'timeZone'),
        status: Number(typed(data, 'status')),
        description: optional(data, 'description'),
      })
    },
  })
  if (!done || !created) return
  ctx.notify(`Site ${created.code} created.`)
  ctx.navigate(`/sites/${encodeURIComponent(created.code)}`)
}
