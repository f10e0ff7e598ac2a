// Site users (site server; site owners and admins): the people who sign in with an e-mail and PIN. Add one (the
// PIN is typed here once and stored only as a hash), change a role, set a new PIN (their sessions end), remove;
// owners also end a sign-in lock that repeated wrong PINs put on a user's e-mail.
// Nobody gives a role above their own; the last owner stays (the API answers 403 / 409, shown here).
import type { SiteUser } from '../api-types.ts'
import type { Page } from '../context.ts'
import { openDialog } from '../dialog.ts'
import { clearProblems, field, h, messageOf, select, showProblem, table, time, uid } from '../dom.ts'
import { pager, type PageOf } from '../paging.ts'

const ROLE_RANK: Record<string, number> = { member: 1, admin: 2, owner: 3 }
const pinInput = (name: string) =>
  h('input', { type: 'password', name, autocomplete: 'new-password', inputmode: 'numeric', pattern: '[0-9]*', minlength: 6, maxlength: 12, required: true })

export const page: Page = async (root, ctx) => {
  const base = '/api/site/users'
  const myRank = ROLE_RANK[ctx.principal.role] ?? 1
  // POST …/unlock is for site owners only (the API answers 403 to admins).
  const isOwner = ctx.principal.role === 'owner'
  const roles = (['member', 'admin', 'owner'] as const)
    .filter((r) => ROLE_RANK[r]! <= myRank)
    .map((r): [string, string] => [r, r[0]!.toUpperCase() + r.slice(1)])
  const email = h('input', { type: 'email', name: 'email', autocomplete: 'off', autocapitalize: 'none', spellcheck: 'false', required: true })
  const displayName = h('input', { type: 'text', name: 'displayName', autocomplete: 'off', required: true, maxlength: 200 })
  const role = select('siteRole', roles, 'member')
  const pin = pinInput('pin')
  const submit = h('button', { type: 'submit', class: 'primary' }, 'Add site user')
  const form = h(
    'form',
    { class: 'form inline-form', novalidate: true },
    field('E-mail', email, { pointer: '/email' }),
    field('Display name', displayName, { pointer: '/displayName' }),
    field('Site role', role, { pointer: '/siteRole' }),
    field('PIN', pin, { pointer: '/pin', hint: '6 to 12 digits; give it to the person in person.' }),
    h('div', { class: 'actions' }, submit),
  )
  const list = h('section', { 'aria-labelledby': 'site-users-heading' }, h('h2', { id: 'site-users-heading' }, 'Site users'))
  root.append(
    h('h1', {}, 'Site users'),
    h('section', { 'aria-labelledby': 'add-user-heading' }, h('h2', { id: 'add-user-heading' }, 'Add a site user'), form),
    list,
  )

  async function changeRole(u: SiteUser, to: string, control: HTMLSelectElement): Promise<void> {
    try {
      await ctx.api.send('PATCH', `${base}/${encodeURIComponent(u.id)}`, { siteRole: to })
      ctx.notify(`${u.displayName} is now ${to}.`)
    } catch (error) {
      control.value = u.siteRole
      ctx.notify(messageOf(error), 'error')
    }
    await users.reload()
  }

  async function setPin(u: SiteUser): Promise<void> {
    const done = await openDialog({
      title: `New PIN for ${u.displayName}`,
      body: [h('p', {}, 'Their current sign-ins end at once; they sign in again with the new PIN.')],
      fields: [field('New PIN', pinInput('pin'), { pointer: '/pin', hint: '6 to 12 digits.' })],
      submitLabel: 'Set PIN',
      onSubmit: async (data) => {
        await ctx.api.send('PUT', `${base}/${encodeURIComponent(u.id)}/pin`, { pin: String(data.get('pin')) })
      },
    })
    if (done) ctx.notify(`New PIN set for ${u.displayName}.`)
  }

  async function unlock(u: SiteUser): Promise<void> {
    try {
      const { wasLockedUntil } = await ctx.api.send<{ wasLockedUntil: string | null }>('POST', `${base}/${encodeURIComponent(u.id)}/unlock`)
      ctx.notify(wasLockedUntil ? `${u.displayName} can sign in again.` : `${u.displayName} was not locked.`)
    } catch (error) {
      ctx.notify(messageOf(error), 'error')
    }
  }

  async function remove(u: SiteUser): Promise<void> {
    const done = await openDialog({
      title: `Remove ${u.displayName}?`,
      body: [h('p', {}, `${u.email} can no longer sign in; their sign-ins end at once.`)],
      submitLabel: 'Remove site user',
      danger: true,
      onSubmit: async () => {
        await ctx.api.send('DELETE', `${base}/${encodeURIComponent(u.id)}`)
      },
    })
    if (!done) return
    ctx.notify(`${u.displayName} removed.`)
    await users.reload()
  }

  const users = pager<SiteUser>(
    list,
    'Site users',
    (cursor) => ctx.api.get<PageOf<SiteUser>>(base, { limit: 50, cursor }),
    (items) =>
      table(
        'Site users',
        ['Name', 'E-mail', 'Role', 'PIN set', 'Actions'],
        items.map((u) => {
          const editable = (ROLE_RANK[u.siteRole] ?? 1) <= myRank
          const roleSelect = select('siteRole', editable ? roles : [[u.siteRole, u.siteRole]], u.siteRole)
          roleSelect.id = uid('role')
          roleSelect.disabled = !editable
          roleSelect.addEventListener('change', () => {
            void changeRole(u, roleSelect.value, roleSelect)
          })
          return {
            attrs: { 'data-user-id': u.id },
            cells: [
              u.displayName,
              u.email,
              h('span', {}, h('label', { for: roleSelect.id, class: 'visually-hidden' }, `Role of ${u.displayName}`), roleSelect),
              time(u.pinChangedAt),
              editable
                ? h(
                    'span',
                    { class: 'row-actions' },
                    h(
                      'button',
                      {
                        type: 'button',
                        class: 'secondary small',
                        'aria-label': `Set a new PIN for ${u.displayName}`,
                        onclick: () => {
                          void setPin(u)
                        },
                      },
                      'New PIN',
                    ),
                    isOwner
                      ? h(
                          'button',
                          {
                            type: 'button',
                            class: 'secondary small',
                            'aria-label': `Unlock sign-in of ${u.displayName}`,
                            onclick: () => {
                              void unlock(u)
                            },
                          },
                          'Unlock sign-in',
                        )
                      : '',
                    h(
                      'button',
                      {
                        type: 'button',
                        class: 'danger small',
                        'aria-label': `Remove ${u.displayName}`,
                        onclick: () => {
                          void remove(u)
                        },
                      },
                      'Remove',
                    ),
                  )
                : '',
            ],
          }
        }),
        { empty: 'No site users.' },
      ),
  )

  form.addEventListener('submit', (event) => {
    event.preventDefault()
    clearProblems(form)
    submit.disabled = true
    const body = { email: email.value.trim(), displayName: displayName.value.trim(), siteRole: role.value, pin: pin.value }
    ctx.api
      .send<SiteUser>('POST', base, body)
      .then(
        async (user) => {
          ctx.notify(`${user.displayName} added.`)
          form.reset()
          await users.reload()
        },
        (error: unknown) => {
          pin.value = ''
          showProblem(form, error)
        },
      )
      .finally(() => {
        submit.disabled = false
      })
  })
  await users.reload()
}
