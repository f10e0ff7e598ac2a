// Members (organisation owners and admins, cloud mode): pending sign-in requests to approve with a role (a dialog
// showing the API's refusal) or refuse, active members to revoke (their sessions end at once). GET/POST/DELETE /api/admin/orgs/{slug}/members.
import type { Member } from '../api-types.ts'
import type { Page } from '../context.ts'
import { openDialog } from '../dialog.ts'
import { field, formatTime, h, select, table, time } from '../dom.ts'
import { typed } from '../forms.ts'
import { pager, type PageOf } from '../paging.ts'

const ROLES = ['member', 'admin', 'owner'] as const

export const page: Page = async (root, ctx) => {
  const base = `/api/admin/orgs/${encodeURIComponent(ctx.org.slug)}/members`
  const status = select(
    'status',
    [
      ['', 'Pending and active'],
      ['pending', 'Pending requests'],
      ['active', 'Active members'],
    ],
    ctx.query.get('status') ?? '',
  )
  const filters = h('form', { class: 'filters', role: 'search', 'aria-label': 'Filter members' }, field('Show', status))
  filters.addEventListener('submit', (e) => e.preventDefault())
  const list = h('section', { 'aria-label': 'Members' })
  root.append(
    h('h1', {}, 'Members'),
    h('p', {}, "Anyone who signs in at this organisation's address for the first time asks to join. Approve them with a role, or refuse."),
    filters,
    list,
  )

  const who = (m: Member) => `${m.name ?? m.email ?? m.accountId}`

  // Every role is offered: the API refuses one above the caller's (403), and the dialog shows its words.
  async function approve(m: Member): Promise<void> {
    const role = select(
      'role',
      ROLES.map((r) => [r, r]),
      'member',
    )
    const done = await openDialog({
      title: `Approve ${who(m)}`,
      body: [h('p', {}, `${m.email ?? m.accountId} asked to join on ${formatTime(m.requestedAt)}.`)],
      fields: [field('Role', role, { pointer: '/role' })],
      submitLabel: 'Approve',
      onSubmit: async (data) => {
        await ctx.api.send('POST', `${base}/${encodeURIComponent(m.accountId)}/approve`, { role: typed(data, 'role') })
      },
    })
    if (!done) return
    ctx.notify(`${who(m)} approved as ${role.value}.`)
    await members.reload()
  }

  async function revoke(m: Member): Promise<void> {
    const pending = m.status === 'pending'
    const done = await openDialog({
      title: pending ? `Refuse the request of ${who(m)}?` : `Revoke ${who(m)}?`,
      body: [
        h(
          'p',
          {},
          pending ? 'The request is refused; signing in again files a new one.' : 'Their access ends at once and their browser sessions are signed out.',
        ),
      ],
      submitLabel: pending ? 'Refuse request' : 'Revoke member',
      danger: true,
      onSubmit: async () => {
        await ctx.api.send('DELETE', `${base}/${encodeURIComponent(m.accountId)}`)
      },
    })
    if (!done) return
    ctx.notify(pending ? `Request of ${who(m)} refused.` : `${who(m)} revoked.`)
    await members.reload()
  }

  const members = pager<Member>(
    list,
    'Members',
    (cursor) => ctx.api.get<PageOf<Member>>(base, { limit: 50, cursor, status: status.value || undefined }),
    (items) =>
      table(
        'Members',
        ['Name', 'E-mail', 'Status', 'Role', 'Requested', 'Actions'],
        items.map((m) => {
          let actions: HTMLElement
          if (m.status === 'pending') {
            actions = h(
              'span',
              { class: 'row-actions' },
              h(
                'button',
                {
                  type: 'button',
                  class: 'primary small',
                  'aria-label': `Approve ${who(m)}`,
                  onclick: () => {
                    void approve(m)
                  },
                },
                'Approve',
              ),
              h(
                'button',
                {
                  type: 'button',
                  class: 'secondary small',
                  'aria-label': `Refuse ${who(m)}`,
                  onclick: () => {
                    void revoke(m)
                  },
                },
                'Refuse',
              ),
            )
          } else {
            actions = h(
              'span',
              { class: 'row-actions' },
              h(
                'button',
                {
                  type: 'button',
                  class: 'danger small',
                  'aria-label': `Revoke ${who(m)}`,
                  onclick: () => {
                    void revoke(m)
                  },
                },
                'Revoke',
              ),
            )
          }
          return {
            attrs: { 'data-account-id': m.accountId, 'data-status': m.status },
            cells: [m.name ?? '—', m.email ?? '—', m.status, m.role ?? '—', time(m.requestedAt), actions],
          }
        }),
        { empty: 'No members match.' },
      ),
  )
  status.addEventListener('change', () => {
    void members.first()
  })
  await members.reload()
}
