// Fleet (cloud, organisation owners and admins; issue 26): the site servers with their link state (online or
// offline from the last contact, backlog each way, last error), register one (its one-time code and the
// `sitegrid link enrol` command shown once), a new code, revoke after a confirmation; and the conflicts to review,
// both versions side by side, re-apply or dismiss.
import type { LinkConflict, Site as SiteSummary, SiteServer, SiteServerWithCode } from '../api-types.ts'
import type { Page, PageContext } from '../context.ts'
import { openDialog } from '../dialog.ts'
import { clear, clearProblems, copyShown, field, h, messageOf, showProblem, table, time, uid } from '../dom.ts'
import { backlogText, conflictCard } from '../fleet-view.ts'
import { ago } from '../last-change.ts'
import { pager, type PageOf } from '../paging.ts'

const STATUS_LABEL: Record<SiteServer['status'], string> = { registered: 'Registered (waiting for enrolment)', enrolled: 'Enrolled', revoked: 'Revoked' }
const CONNECTION_LABEL: Record<SiteServer['connection'], string> = { online: 'Online', offline: 'Offline', never: 'Never connected' }

function copyable(label: string, value: string, id: string): HTMLElement {
  const input = h('input', { type: 'text', readonly: true, value, class: 'secret', id, spellcheck: 'false', autocomplete: 'off' })
  const said = h('span', { class: 'hint', role: 'status' })
  const button = h('button', { type: 'button', class: 'secondary small', 'aria-label': `Copy ${label.toLowerCase()}` }, 'Copy')
  button.addEventListener('click', () => {
    void copyShown(value, input).then((ok) => {
      said.textContent = ok ? 'Copied.' : 'Selected: press Ctrl+C (⌘C) to copy.'
    })
  })
  return h('div', { class: 'field' }, h('label', { for: id }, label), h('div', { class: 'copy-row' }, input, button, said))
}

export const page: Page = async (root, ctx) => {
  root.append(
    h('h1', {}, 'Fleet'),
    h(
      'p',
      {},
      'Site servers run plants on their own and link to this cloud when the network allows. A site server is online while it called within the last minute (it calls at least every 25 s while connected).',
    ),
  )
  const sites = (await ctx.api.get<PageOf<SiteSummary>>('/api/sites', { limit: 500 })).items
  const reveal = h('div', { class: 'reveal-slot' })
  const registerBox = h('section', { 'aria-labelledby': 'register-heading' }, h('h2', { id: 'register-heading' }, 'Register a site server'))
  const serversBox = h('section', { 'aria-labelledby': 'servers-heading' }, h('h2', { id: 'servers-heading' }, 'Site servers'))
  const conflictsBox = h('section', { 'aria-labelledby': 'conflicts-heading' }, h('h2', { id: 'conflicts-heading' }, 'Conflicts to review'))
  root.append(registerBox, reveal, serversBox, conflictsBox)

  // Register: a name and the sites it runs.
  const name = h('input', { type: 'text', name: 'name', required: true, maxlength: 200, autocomplete: 'off' })
  const siteChecks = h(
    'fieldset',
    { class: 'checks', 'data-pointer': '/sites' },
    h('legend', {}, 'Sites it runs'),
    ...sites.map((s) => {
      const id = uid('srv-site')
      return h('span', { class: 'check' }, h('input', { type: 'checkbox', id, name: 'sites', value: s.code }), h('label', { for: id }, `${s.code} — ${s.name}`))
    }),
    h('p', { class: 'field-error', hidden: true }),
  )
  const submit = h('button', { type: 'submit', class: 'primary' }, 'Register site server')
  const form = h(
    'form',
    { class: 'form', novalidate: true, 'aria-labelledby': 'register-heading' },
    field('Name', name, { pointer: '/name', hint: 'Who will recognise it, e.g. "Pit 3 server".' }),
    sites.length > 0 ? siteChecks : h('p', { class: 'empty' }, 'No sites yet: a site server runs some of the organisation’s sites.'),
    h('div', { class: 'actions' }, submit),
  )
  registerBox.append(form)

  function showCode(answer: SiteServerWithCode, isNew: boolean): void {
    clear(reveal)
    const command = `sitegrid link enrol --cloud ${location.origin} --code ${answer.enrolmentCode}`
    const done = h('button', { type: 'button', class: 'secondary' }, 'I have copied it — hide the code')
    const panel = h(
      'div',
      { class: 'reveal', role: 'alert', tabindex: '-1', 'aria-labelledby': 'code-heading', 'data-server-id': answer.id },
      h('h3', { id: 'code-heading' }, `${isNew ? 'Registered' : 'New enrolment code for'} "${answer.name}" (${answer.sites.join(', ')})`),
      h(
        'p',
        { class: 'warning' },
        h('strong', {}, 'Copy the code now. '),
        'It is shown only this once (the cloud keeps only a hash of it) and works once, until ',
        time(answer.codeExpiresAt),
        '. If it is lost, issue a new code.',
      ),
      copyable('Enrolment code', answer.enrolmentCode, 'enrolment-code'),
      copyable('Command to run on the site server', command, 'enrol-command'),
      h('div', { class: 'actions' }, done),
    )
    done.addEventListener('click', () => {
      clear(reveal)
      name.focus()
    })
    reveal.append(panel)
    panel.focus()
  }

  form.addEventListener('submit', (event) => {
    event.preventDefault()
    clearProblems(form)
    const chosen = [...siteChecks.querySelectorAll<HTMLInputElement>('input:checked')].map((i) => i.value)
    submit.disabled = true
    ctx.api
      .send<SiteServerWithCode>('POST', '/api/admin/site-servers', { name: name.value.trim(), sites: chosen })
      .then(
        async (answer) => {
          form.reset()
          showCode(answer, true)
          await servers.reload()
        },
        (error: unknown) => showProblem(form, error),
      )
      .finally(() => {
        submit.disabled = false
      })
  })

  // The site servers, paged.
  const serverNames = new Map<string, string>()
  const updated = h('p', { class: 'hint', 'aria-live': 'off' })
  const refresh = h('button', { type: 'button', class: 'secondary small' }, 'Refresh')
  serversBox.append(h('div', { class: 'actions' }, refresh, updated))
  const servers = pager<SiteServer>(
    serversBox,
    'Site servers',
    (cursor) => ctx.api.get<PageOf<SiteServer>>('/api/admin/site-servers', { limit: 50, cursor }),
    (items) => {
      for (const s of items) serverNames.set(s.id, s.name)
      updated.textContent = `Updated ${new Date().toLocaleTimeString()}`
      return serverTable(items, ctx, { onCode: (a) => showCode(a, false), onChange: () => void servers.reload() })
    },
  )
  refresh.addEventListener('click', () => {
    void servers.reload().then(() => conflicts.reload())
  })

  // Conflicts to review, newest first.
  const conflicts = pager<LinkConflict>(
    conflictsBox,
    'Conflicts',
    (cursor) => ctx.api.get<PageOf<LinkConflict>>('/api/link/conflicts', { unresolved: true, limit: 20, cursor }),
    (items) => {
      if (items.length === 0) return h('p', { class: 'empty' }, 'No conflicts to review.')
      return h(
        'div',
        { class: 'conflicts' },
        ...items.map((c) =>
          conflictCard(c, `site server ${serverNames.get(c.serverId) ?? c.serverId}`, [
            h(
              'button',
              {
                type: 'button',
                class: 'primary small',
                'aria-label': `Re-apply the site's version of ${c.table} ${c.key.join(' / ')}`,
                onclick: () => void settle(c, 'reapply'),
              },
              "Re-apply the site's version",
            ),
            h(
              'button',
              {
                type: 'button',
                class: 'secondary small',
                'aria-label': `Dismiss the conflict on ${c.table} ${c.key.join(' / ')}`,
                onclick: () => void settle(c, 'dismiss'),
              },
              "Dismiss (keep the cloud's)",
            ),
          ]),
        ),
      )
    },
  )

  async function settle(c: LinkConflict, how: 'reapply' | 'dismiss'): Promise<void> {
    try {
      await ctx.api.send('POST', `/api/link/conflicts/${encodeURIComponent(c.id)}/${how}`)
      ctx.notify(
        how === 'reapply'
          ? `The site's version of ${c.table} ${c.key.join(' / ')} is re-applied; it reaches the site server by the link.`
          : `Conflict on ${c.table} ${c.key.join(' / ')} dismissed; the cloud's version stays.`,
      )
    } catch (error) {
      ctx.notify(messageOf(error), 'error')
    }
    await conflicts.reload()
  }

  await servers.reload()
  await conflicts.reload()
}

function serverTable(items: SiteServer[], ctx: PageContext, on: { onCode(answer: SiteServerWithCode): void; onChange(): void }): HTMLElement {
  return table(
    'Site servers, oldest registration first',
    ['Site server', 'Sites', 'Status', 'Connection', 'Last contact', 'Last error', 'Waiting to go up', 'Waiting to go down', 'Actions'],
    items.map((s) => {
      const reported = s.backlog as { up?: { items?: unknown; bytes?: unknown; oldestAt?: unknown }; state?: unknown } | null
      return {
        attrs: { 'data-server-id': s.id, 'data-status': s.status, 'data-connection': s.connection },
        cells: [
          h('span', {}, h('strong', {}, s.name), h('br'), h('span', { class: 'hint mono' }, s.id)),
          s.sites.join(', '),
          h('span', { class: `server-status ${s.status}` }, STATUS_LABEL[s.status]),
          h(
            'span',
            { class: `connection connection-${s.connection}` },
            CONNECTION_LABEL[s.connection],
            typeof reported?.state === 'string' && s.connection === 'online' && reported.state !== 'online'
              ? h('span', { class: 'hint' }, ` (reports ${reported.state})`)
              : null,
          ),
          s.lastContactAt ? h('span', {}, time(s.lastContactAt), h('br'), h('span', { class: 'hint' }, ago(s.lastContactAt))) : '—',
          s.lastError ? h('span', { class: 'warn-text' }, s.lastError) : '—',
          backlogText(reported?.up),
          backlogText(s.down),
          h(
            'span',
            { class: 'row-actions' },
            h(
              'button',
              {
                type: 'button',
                class: 'secondary small',
                'aria-label': `New enrolment code for ${s.name}`,
                onclick: () => {
                  ctx.api.send<SiteServerWithCode>('POST', `/api/admin/site-servers/${encodeURIComponent(s.id)}/enrolment-code`).then(
                    (answer) => {
                      on.onCode(answer)
                      on.onChange()
                    },
                    (error: unknown) => ctx.notify(messageOf(error), 'error'),
                  )
                },
              },
              'New code',
            ),
            s.status === 'revoked'
              ? null
              : h(
                  'button',
                  { type: 'button', class: 'danger small', 'aria-label': `Revoke ${s.name}`, onclick: () => void revoke(ctx, s, on.onChange) },
                  'Revoke',
                ),
          ),
        ],
      }
    }),
    { empty: 'No site servers registered yet.' },
  )
}

async function revoke(ctx: PageContext, s: SiteServer, onChange: () => void): Promise<void> {
  const done = await openDialog({
    title: `Revoke site server "${s.name}"?`,
    body: [
      h(
        'p',
        {},
        `Its link credential stops working at once: it keeps running ${s.sites.join(', ')} on its own, and nothing more goes up or down until it enrols again with a new code (it then resumes where it stopped).`,
      ),
    ],
    submitLabel: 'Revoke site server',
    danger: true,
    onSubmit: async () => {
      await ctx.api.send('POST', `/api/admin/site-servers/${encodeURIComponent(s.id)}/revoke`)
    },
  })
  if (!done) return
  ctx.notify(`Site server "${s.name}" revoked.`)
  onChange()
}
