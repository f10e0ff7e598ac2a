// Domain bindings (organisation owners and admins): bind a domain (created disabled), enable or disable it, remove
// it. An enabled binding serves the organisation exactly as its own subdomain does.
import type { DomainBinding as Binding } from '../api-types.ts'
import type { Page } from '../context.ts'
import { openDialog } from '../dialog.ts'
import { clearProblems, field, h, messageOf, showProblem, table, time } from '../dom.ts'
import { pager, type PageOf } from '../paging.ts'

export const page: Page = async (root, ctx) => {
  const base = `/api/admin/orgs/${encodeURIComponent(ctx.org.slug)}/domains`
  const domain = h('input', {
    type: 'text',
    name: 'domain',
    required: true,
    autocomplete: 'off',
    spellcheck: 'false',
    autocapitalize: 'none',
    inputmode: 'url',
  })
  const submit = h('button', { type: 'submit', class: 'primary' }, 'Bind domain')
  const form = h(
    'form',
    { class: 'form inline-form', novalidate: true },
    field('Domain', domain, { pointer: '/domain', hint: 'Lower case, e.g. plant.example.com. Point its DNS at this service first.' }),
    h('div', { class: 'actions' }, submit),
  )
  const list = h('section', { 'aria-labelledby': 'domains-heading' }, h('h2', { id: 'domains-heading' }, 'Bindings'))
  root.append(h('h1', {}, 'Domain bindings'), h('section', { 'aria-labelledby': 'bind-heading' }, h('h2', { id: 'bind-heading' }, 'Bind a domain'), form), list)

  async function setEnabled(b: Binding): Promise<void> {
    try {
      await ctx.api.send('PATCH', `${base}/${encodeURIComponent(b.domain)}`, { isEnabled: !b.isEnabled })
      ctx.notify(`${b.domain} ${b.isEnabled ? 'disabled' : 'enabled'}.`)
    } catch (error) {
      ctx.notify(messageOf(error), 'error')
    }
    await bindings.reload()
  }

  async function remove(b: Binding): Promise<void> {
    const done = await openDialog({
      title: `Remove ${b.domain}?`,
      body: [h('p', {}, 'Requests to this domain stop reaching the organisation at once.')],
      submitLabel: 'Remove binding',
      danger: true,
      onSubmit: async () => {
        await ctx.api.send('DELETE', `${base}/${encodeURIComponent(b.domain)}`)
      },
    })
    if (!done) return
    ctx.notify(`${b.domain} removed.`)
    await bindings.reload()
  }

  const bindings = pager<Binding>(
    list,
    'Domain bindings',
    (cursor) => ctx.api.get<PageOf<Binding>>(base, { limit: 50, cursor }),
    (items) =>
      table(
        'Domain bindings',
        ['Domain', 'State', 'Bound', 'Changed', 'Actions'],
        items.map((b) => ({
          attrs: { 'data-domain': b.domain },
          cells: [
            b.domain,
            b.isEnabled ? 'Enabled' : 'Disabled',
            time(b.createdAt),
            time(b.updatedAt),
            h(
              'span',
              { class: 'row-actions' },
              h(
                'button',
                {
                  type: 'button',
                  class: 'secondary small',
                  'aria-label': `${b.isEnabled ? 'Disable' : 'Enable'} ${b.domain}`,
                  onclick: () => {
                    void setEnabled(b)
                  },
                },
                b.isEnabled ? 'Disable' : 'Enable',
              ),
              h(
                'button',
                {
                  type: 'button',
                  class: 'danger small',
                  'aria-label': `Remove ${b.domain}`,
                  onclick: () => {
                    void remove(b)
                  },
                },
                'Remove',
              ),
            ),
          ],
        })),
        { empty: 'No domains bound. The organisation is served at its own subdomain.' },
      ),
  )

  form.addEventListener('submit', (event) => {
    event.preventDefault()
    clearProblems(form)
    submit.disabled = true
    ctx.api
      .send('POST', base, { domain: domain.value.trim() })
      .then(
        async () => {
          ctx.notify(`${domain.value.trim()} bound (disabled until you enable it).`)
          form.reset()
          await bindings.reload()
        },
        (error: unknown) => showProblem(form, error),
      )
      .finally(() => {
        submit.disabled = false
      })
  })
  await bindings.reload()
}
