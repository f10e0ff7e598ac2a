// API keys (owners and admins): mint (the plaintext is shown once, with a copy button and a warning), list, and
// revoke with a reason after a confirmation. The list shows each key's restriction (site, client networks). The API
// lists only keys that still authenticate; a key revoked here stays in the table, marked revoked, until the page is left.
import type { ApiKey, MintedApiKey as MintedKey } from '../api-types.ts'
import type { Page } from '../context.ts'
import { openDialog } from '../dialog.ts'
import { clear, clearProblems, copyShown, field, h, messageOf, select, showProblem, table, time } from '../dom.ts'

const DAY = 86_400_000
const ROLE_RANK: Record<string, number> = { member: 1, admin: 2, owner: 3 }

/** Issue 30: a gateway's key reaches one site, optionally only from some client networks. */
function restriction(k: ApiKey): HTMLElement {
  const site = k.siteId === null ? 'Every site' : `Site ${k.siteId}`
  const networks = k.networks === null ? 'any network' : `from ${k.networks.join(', ')}`
  return h('span', { class: 'key-restriction', 'data-site': k.siteId ?? '', 'data-networks': (k.networks ?? []).join(',') }, `${site}, ${networks}`)
}

export const page: Page = async (root, ctx) => {
  const myRank = ctx.principal.isPlatformAdmin ? 3 : (ROLE_RANK[ctx.principal.role] ?? 1)
  const roles = (['member', 'admin', 'owner'] as const).filter((r) => ROLE_RANK[r]! <= myRank)
  const name = h('input', { type: 'text', name: 'name', required: true, maxlength: 200, autocomplete: 'off' })
  const role = select(
    'role',
    roles.map((r) => [r, r[0]!.toUpperCase() + r.slice(1)]),
    'member',
  )
  const lifetime = select(
    'expiresIn',
    [
      ['7', '7 days'],
      ['30', '30 days'],
      ['90', '90 days'],
      ['180', '180 days'],
      ['365', '1 year'],
      ['730', '2 years'],
    ],
    '90',
  )
  const submit = h('button', { type: 'submit', class: 'primary' }, 'Mint key')
  const form = h(
    'form',
    { class: 'form inline-form', novalidate: true, 'aria-labelledby': 'mint-heading' },
    field('Name', name, { pointer: '/name', hint: 'Who or what will use it, e.g. "edge gateway 3".' }),
    field('Role', role, { pointer: '/role' }),
    field('Expires in', lifetime, { pointer: '/expiresAt' }),
    h('div', { class: 'actions' }, submit),
  )
  const reveal = h('div', { class: 'reveal-slot' })
  const listBody = h('div', {})
  root.append(
    h('h1', {}, 'API keys'),
    h('p', {}, 'Keys let gateways and integrations call the API. Rotate a key by minting a new one, switching the callers over, then revoking the old one.'),
    h('section', { 'aria-labelledby': 'mint-heading' }, h('h2', { id: 'mint-heading' }, 'Mint a key'), form, reveal),
    h('section', { 'aria-labelledby': 'keys-heading' }, h('h2', { id: 'keys-heading' }, 'Keys'), listBody),
  )

  const revoked = new Map<string, ApiKey>()

  function showPlaintext(minted: MintedKey): void {
    clear(reveal)
    const value = h('input', {
      type: 'text',
      readonly: true,
      value: minted.plaintext,
      class: 'secret',
      id: 'new-key-value',
      spellcheck: 'false',
      autocomplete: 'off',
    })
    const copied = h('span', { class: 'hint', role: 'status' })
    const copyButton = h('button', { type: 'button', class: 'primary', id: 'copy-key' }, 'Copy key')
    copyButton.addEventListener('click', () => {
      void copyShown(minted.plaintext, value).then((ok) => {
        copied.textContent = ok ? 'Copied to the clipboard.' : 'Selected: press Ctrl+C (⌘C) to copy.'
      })
    })
    const doneButton = h('button', { type: 'button', class: 'secondary' }, 'I have stored it — hide the key')
    const panel = h(
      'div',
      { class: 'reveal', role: 'alert', tabindex: '-1', 'aria-labelledby': 'reveal-heading' },
      h('h3', { id: 'reveal-heading' }, `New key "${minted.name}" (${minted.role})`),
      h(
        'p',
        { class: 'warning' },
        h('strong', {}, 'Copy this key now. '),
        'It is shown only this once: sitegrid keeps only a fingerprint of it and cannot show it again. If it is lost, revoke it and mint another.',
      ),
      h('label', { for: value.id }, 'The new API key'),
      value,
      h('div', { class: 'actions' }, copyButton, doneButton, copied),
    )
    doneButton.addEventListener('click', () => {
      clear(reveal)
      name.focus()
    })
    reveal.append(panel)
    panel.focus()
  }

  async function loadList(): Promise<void> {
    try {
      const keys = await ctx.api.get<ApiKey[]>('/api/admin/api-keys')
      const rows = [...keys.filter((k) => !revoked.has(k.keyId)), ...revoked.values()]
      clear(listBody)
      listBody.append(
        table(
          'API keys, newest first',
          ['Name', 'Prefix', 'Role', 'Restriction', 'Created', 'Expires', 'Last used', 'Status', 'Actions'],
          rows.map((k) => {
            const isRevoked = revoked.has(k.keyId)
            const expired = Date.parse(k.expiresAt) <= Date.now()
            return {
              attrs: { 'data-key-id': k.keyId, 'data-status': isRevoked ? 'revoked' : expired ? 'expired' : 'active' },
              cells: [
                k.name,
                h('code', {}, k.keyPrefix),
                k.role,
                restriction(k),
                time(k.createdAt),
                time(k.expiresAt),
                time(k.lastUsedAt),
                h(
                  'span',
                  { class: `key-status ${isRevoked ? 'revoked' : expired ? 'expired' : 'active'}` },
                  isRevoked ? 'Revoked' : expired ? 'Expired' : 'Active',
                ),
                isRevoked
                  ? ''
                  : h(
                      'button',
                      {
                        type: 'button',
                        class: 'danger small',
                        'aria-label': `Revoke key ${k.name} (${k.keyPrefix})`,
                        onclick: () => {
                          void revoke(k)
                        },
                      },
                      'Revoke',
                    ),
              ],
            }
          }),
          { empty: 'No keys yet.' },
        ),
      )
    } catch (error) {
      clear(listBody)
      listBody.append(h('p', { class: 'form-error', role: 'alert' }, messageOf(error)))
    }
  }

  async function revoke(key: ApiKey): Promise<void> {
    const reason = h('textarea', { name: 'reason', maxlength: 500, rows: 3 })
    const done = await openDialog({
      title: `Revoke key "${key.name}"?`,
      body: [h('p', {}, 'Every caller using ', h('code', {}, `${key.keyPrefix}…`), ' is refused from now on, in every process. This cannot be undone.')],
      fields: [field('Reason', reason, { pointer: '/reason', hint: 'Optional; kept in the audit log.' })],
      submitLabel: 'Revoke key',
      danger: true,
      onSubmit: async (data) => {
        await ctx.api.send('DELETE', `/api/admin/api-keys/${encodeURIComponent(key.keyId)}`, { reason: String(data.get('reason')).trim() })
      },
    })
    if (!done) return
    revoked.set(key.keyId, key)
    ctx.notify(`Key "${key.name}" revoked.`)
    await loadList()
  }

  form.addEventListener('submit', (event) => {
    event.preventDefault()
    clearProblems(form)
    // Checked by the API (a 400 naming /name shows next to the field), the same rules for every client.
    submit.disabled = true
    const body = { name: name.value.trim(), role: role.value, expiresAt: new Date(Date.now() + Number(lifetime.value) * DAY).toISOString() }
    ctx.api
      .send<MintedKey>('POST', '/api/admin/api-keys', body)
      .then(
        async (minted) => {
          form.reset()
          role.value = 'member'
          lifetime.value = '90'
          showPlaintext(minted)
          await loadList()
        },
        (error: unknown) => showProblem(form, error),
      )
      .finally(() => {
        submit.disabled = false
      })
  })

  await loadList()
}
