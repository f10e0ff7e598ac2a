// Members (organisation owners and admins, cloud mode): pending sign-in requests to approve with a role, active
// members to revoke (their sessions end at once). GET/POST/DELETE /api/admin/orgs/{slug}/members.
import type { Member } from '../api-types.ts'
import type { Page } from '../context.ts'
import { openDialog } from '../dialog.ts'
import { field, h, messageOf, select, table, time, uid } from '../dom.ts'
import { pager, type PageOf } from '../paging.ts'

const ROLE_RANK: Record<string, number> = { member: 1, admin: 2, owner: 3 }

export const page: Page = async (root, ctx) => {
  const base = `/api/admin/orgs/${encodeURIComponent(ctx.org.slug)}/members`
  const myRank = ctx.principal.isPlatformAdmin ? 3 : (ROLE_RANK[ctx.principal.role] ?? 1)
  const grantable = (['member', 'admin', 'owner'] as const).filter((r) => ROLE_RANK[r]! <= myRank)
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

  async function approve(m: Member, roleSelect: HTMLSelectElement, button: HTMLButtonElement): Promise<void> {
    button.disabled = true
    try {
      await ctx.api.send('POST', `${base}/${encodeURIComponent(m.accountId)}/approve`, { role: roleSelect.value })
      ctx.notify(`${who(m)} approved as ${roleSelect.value}.`)
      await members.reload()
    } catch (error) {
      ctx.notify(messageOf(error), 'error')
      button.disabled = false
    }
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
            const roleSelect = select(
              'role',
              grantable.map((r) => [r, r]),
              'member',
            )
            roleSelect.id = uid('role')
            const approveButton = h('button', { type: 'button', class: 'primary small' }, 'Approve')
            approveButton.setAttribute('aria-label', `Approve ${who(m)}`)
            approveButton.addEventListener('click', () => {
              void approve(m, roleSelect, approveButton)
            })
            actions = h(
              'span',
              { class: 'row-actions' },
              h('label', { for: roleSelect.id, class: 'visually-hidden' }, `Role for ${who(m)}`),
              roleSelect,
              approveButton,
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
