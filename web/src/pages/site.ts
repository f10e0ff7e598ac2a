// Site page (/sites/:code): the site's fields (edit, delete with the API's preview), its controllers
// (site-controllers.ts), its edge gateways' states (site-gateways.ts) and instances (site-instances.ts) with their forms, and the electrical network (site-network.ts): a one-line diagram laid out automatically (supplies on
// top) with a node panel (ratings, protection, supply paths) and the islands and loops listed and highlighted.
// The site, each controller and each instance say which side last changed them (issue 26, last-change.ts).
import { adoptStyles } from '../adopt-styles.ts'
import type { Site } from '../api-types.ts'
import { ApiProblem, type Page, type PageContext } from '../context.ts'
import { openDialog } from '../dialog.ts'
import { append, field, h, messageOf, time } from '../dom.ts'
import { nullable, typed } from '../forms.ts'
import type { Diagram } from '../one-line/diagram.ts'
import { fillLastChanges, lastChangeSlot } from '../last-change.ts'
import { controllersSection } from './site-controllers.ts'
import { showGateways } from './site-gateways.ts'
import { instancesSection } from './site-instances.ts'
import { showNetwork } from './site-network.ts'
import { figures, isAdmin, siteFormFields, sitePath } from './site-parts.ts'

const CSS = `
.site-page section{margin:1.5rem 0}
.network-area{display:grid;grid-template-columns:minmax(0,1fr) minmax(16rem,22rem);gap:1rem;align-items:start}
@media (max-width:60rem){.network-area{grid-template-columns:minmax(0,1fr)}}
.node-panel{border:1px solid #c6ccd4;border-radius:6px;padding:.75rem 1rem;background:#fff;min-height:8rem}
.node-panel h3{margin:.25rem 0 .5rem}
.node-panel h4{margin:1rem 0 .35rem}
.node-panel .figures{grid-template-columns:max-content 1fr}
.topology-lists{display:grid;grid-template-columns:repeat(auto-fit,minmax(18rem,1fr));gap:1rem}
.topology-lists ol{padding-left:1.25rem;margin:.25rem 0}
.topology-lists li{margin:.35rem 0}
.path-list li{margin:.3rem 0}
.warn-text{color:#b3261e;font-weight:600}
.ok-text{color:#1e7a3a;font-weight:600}
.mono{font-family:ui-monospace,monospace}
`

const api = (ctx: PageContext) => ctx.api

export const page: Page = async (root, ctx) => {
  adoptStyles('site-page', CSS)
  const code = ctx.params.code ?? ''
  root.classList.add('site-page')
  const heading = h('h1', {}, `Site ${code}`)
  root.append(heading)
  let site: Site
  try {
    site = await api(ctx).get<Site>(sitePath(code))
  } catch (error) {
    root.append(
      h('p', { class: 'form-error', role: 'alert' }, error instanceof ApiProblem && error.status === 404 ? `There is no site ${code}.` : messageOf(error)),
      h('p', {}, h('a', { href: '/sites' }, 'Back to the sites')),
    )
    return
  }
  // The figures are redrawn after an edit; the buttons stay, so the focus returns to Edit site.
  const details = h('div', {})
  const showSite = (s: Site) => {
    site = s
    heading.textContent = `${s.name} (${s.code})`
    details.replaceChildren(
      figures([
        ['Code', h('span', { class: 'mono' }, s.code)],
        ['Name', s.name],
        ['Status', s.statusName],
        ['Time zone', s.timeZone],
        ['Location', s.location ?? '—'],
        ['Description', s.description ?? '—'],
        ['Created', time(s.createdAt, s.timeZone)],
        ['Updated', time(s.updatedAt, s.timeZone)],
        ['Last change', lastChangeSlot([s.code])],
      ]),
    )
    void fillLastChanges(ctx, details, 'sites')
  }
  const siteFields = h('section', { 'aria-labelledby': 'site-fields' })
  append(
    siteFields,
    h('h2', { id: 'site-fields' }, 'Site'),
    isAdmin(ctx)
      ? h(
          'p',
          { class: 'row-actions' },
          h(
            'button',
            {
              type: 'button',
              class: 'secondary',
              onclick: () => {
                void editSite(ctx, site, showSite)
              },
            },
            'Edit site',
          ),
          h(
            'button',
            {
              type: 'button',
              class: 'danger',
              onclick: () => {
                void deleteSite(ctx, site)
              },
            },
            'Delete site',
          ),
        )
      : null,
    details,
    h(
      'p',
      {},
      h('a', { href: `/historian?site=${encodeURIComponent(site.code)}` }, 'Historian imports and trends of this site'),
      ' · ',
      h('a', { href: `/alarms?site=${encodeURIComponent(site.code)}` }, 'Alarms of this site'),
    ),
  )
  showSite(site)
  root.append(siteFields)

  const controllerNames = new Map<string, string>()
  const controllersBox = h('section', { 'aria-labelledby': 'site-controllers' }, h('h2', { id: 'site-controllers' }, 'Controllers'))
  const gatewaysBox = h('section', { 'aria-labelledby': 'site-gateways' }, h('h2', { id: 'site-gateways' }, 'Edge gateways'))
  const instancesBox = h('section', { 'aria-labelledby': 'site-instances' }, h('h2', { id: 'site-instances' }, 'Instances'))
  const networkBox = h('section', { 'aria-labelledby': 'site-network' }, h('h2', { id: 'site-network' }, 'Electrical network'))
  root.append(controllersBox, gatewaysBox, instancesBox, networkBox)
  const controllers = controllersSection(controllersBox, ctx, code, controllerNames)
  const instances = instancesSection(instancesBox, ctx, code, controllerNames)

  // The network is not awaited: a large one waits for the user to ask for the drawing.
  let diagram: Diagram | null = null
  let left = false
  void showNetwork(networkBox, ctx, code).then((d) => {
    if (left) d?.destroy()
    else diagram = d
  })
  await controllers.reload()
  await showGateways(gatewaysBox, ctx, code, site.timeZone)
  await instances.reload()
  return () => {
    left = true
    diagram?.destroy()
  }
}

/** Every field of spec 2.2 (timeZone included), sent as typed; an emptied location or description is cleared (null). */
async function editSite(ctx: PageContext, site: Site, show: (s: Site) => void): Promise<void> {
  let saved: Site | undefined
  const done = await openDialog({
    title: `Edit site ${site.code}`,
    fields: siteFormFields(site),
    submitLabel: 'Save site',
    async onSubmit(data) {
      saved = await ctx.api.send<Site>('PUT', sitePath(site.code), {
        name: typed(data, 'name'),
        location: nullable(data, 'location'),
        timeZone: typed(data, 'timeZone'),
        status: Number(typed(data, 'status')),
        description: nullable(data, 'description'),
      })
    },
  })
  if (!done || !saved) return
  ctx.notify(`Site ${saved.code} saved.`)
  show(saved)
}

/**
 * A delete without `confirm` changes nothing and answers what it would remove (409 `ConfirmationRequired` with
 * `wouldDelete`), or why the site cannot go (a linked site's 409): the dialog shows that preview and sends the code
 * the engineer types as `confirm`.
 */
async function deleteSite(ctx: PageContext, site: Site): Promise<void> {
  const preview: unknown = await ctx.api.send('DELETE', sitePath(site.code)).catch((error: unknown) => error)
  if (!(preview instanceof ApiProblem && preview.code === 'ConfirmationRequired')) {
    ctx.notify(messageOf(preview), 'error')
    return
  }
  const counts = Object.entries(preview.wouldDelete ?? {})
  const confirm = h('input', { type: 'text', name: 'confirm', autocomplete: 'off', spellcheck: 'false' })
  const done = await openDialog({
    title: `Delete site ${site.code}?`,
    body: [
      h('p', {}, 'The site goes with everything it owns, in one step that cannot be undone:'),
      h('ul', { class: 'would-delete' }, ...counts.map(([kind, n]) => h('li', { 'data-kind': kind }, `${kind}: ${n}`))),
    ],
    fields: [field(`Type the site's code (${site.code}) to confirm`, confirm)],
    submitLabel: 'Delete site',
    danger: true,
    async onSubmit(data) {
      await ctx.api.send('DELETE', `${sitePath(site.code)}?confirm=${encodeURIComponent(typed(data, 'confirm'))}`)
    },
  })
  if (!done) return
  ctx.notify(`Site ${site.code} deleted.`)
  ctx.navigate('/sites')
}
