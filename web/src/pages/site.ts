// Site page (/sites/:code): the site's fields, its controllers (connection settings, edge assignment, poll budget),
// its instances (paged), and the electrical network (site-network.ts): a one-line diagram laid out automatically (supplies on
// top) with a node panel (ratings, protection, supply paths) and the islands and loops listed and highlighted.
// The site, each controller and each instance say which side last changed them (issue 26, last-change.ts).
import { adoptStyles } from '../adopt-styles.ts'
import type { Controller, Instance, Site } from '../api-types.ts'
import { ApiProblem, type Page, type PageContext } from '../context.ts'
import { openDialog } from '../dialog.ts'
import { field, h, messageOf, table, time, type Child } from '../dom.ts'
import type { Diagram } from '../one-line/diagram.ts'
import { fillLastChanges, lastChangeSlot } from '../last-change.ts'
import { pager, type PageOf } from '../paging.ts'
import { showNetwork } from './site-network.ts'
import { figures, sitePath } from './site-parts.ts'

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
const isAdmin = (ctx: PageContext) => ctx.principal.role === 'owner' || ctx.principal.role === 'admin'

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
  heading.textContent = `${site.name} (${site.code})`

  const siteFields = h(
    'section',
    { 'aria-labelledby': 'site-fields' },
    h('h2', { id: 'site-fields' }, 'Site'),
    figures([
      ['Code', h('span', { class: 'mono' }, site.code)],
      ['Name', site.name],
      ['Status', site.statusName],
      ['Time zone', site.timeZone],
      ['Location', site.location ?? '—'],
      ['Description', site.description ?? '—'],
      ['Created', time(site.createdAt)],
      ['Updated', time(site.updatedAt)],
      ['Last change', lastChangeSlot([site.code])],
    ]),
    h(
      'p',
      {},
      h('a', { href: `/historian?site=${encodeURIComponent(site.code)}` }, 'Historian imports and trends of this site'),
      ' · ',
      h('a', { href: `/alarms?site=${encodeURIComponent(site.code)}` }, 'Alarms of this site'),
    ),
  )
  root.append(siteFields)
  void fillLastChanges(ctx, siteFields, 'sites')

  const controllerNames = new Map<string, string>()
  const controllersBox = h('section', { 'aria-labelledby': 'site-controllers' }, h('h2', { id: 'site-controllers' }, 'Controllers'))
  const instancesBox = h('section', { 'aria-labelledby': 'site-instances' }, h('h2', { id: 'site-instances' }, 'Instances'))
  const networkBox = h('section', { 'aria-labelledby': 'site-network' }, h('h2', { id: 'site-network' }, 'Electrical network'))
  root.append(controllersBox, instancesBox, networkBox)

  const controllers = pager<Controller>(
    controllersBox,
    'Controllers',
    (cursor) => api(ctx).get<PageOf<Controller>>(`${sitePath(code)}/controllers`, { limit: 25, cursor }),
    (items) => {
      for (const c of items) controllerNames.set(c.id, c.name ?? c.assetNumber)
      const el = controllerTable(items, ctx, code, () => {
        void controllers.reload()
      })
      void fillLastChanges(ctx, el, 'controllers')
      return el
    },
  )
  const instances = pager<Instance>(
    instancesBox,
    'Instances',
    (cursor) => api(ctx).get<PageOf<Instance>>(`${sitePath(code)}/instances`, { limit: 50, cursor }),
    (items) => {
      const el = table(
        'Instances',
        ['Id', 'Name', 'Type', 'Asset number', 'Controller', 'Area', 'Mapped tags', 'Last change'],
        items.map((i) => ({
          attrs: { 'data-instance-id': i.id },
          cells: [
            h('span', { class: 'mono' }, i.id),
            i.name,
            `${i.typeId}${i.typeVersion ? ` ${i.typeVersion}` : ''}`,
            i.assetNumber,
            controllerNames.get(i.controllerId) ?? h('span', { class: 'mono' }, i.controllerId),
            i.area ?? '—',
            String(Object.keys(i.tagMappings).length),
            lastChangeSlot([code, i.id]),
          ],
        })),
        { empty: 'No instances in this site.' },
      )
      void fillLastChanges(ctx, el, 'instances')
      return el
    },
  )

  // The network is not awaited: a large one waits for the user to ask for the drawing.
  let diagram: Diagram | null = null
  let left = false
  void showNetwork(networkBox, ctx, code).then((d) => {
    if (left) d?.destroy()
    else diagram = d
  })
  await controllers.reload()
  await instances.reload()
  return () => {
    left = true
    diagram?.destroy()
  }
}

function controllerTable(items: Controller[], ctx: PageContext, code: string, refresh: () => void): HTMLElement {
  const admin = isAdmin(ctx)
  const headers = ['Controller', 'Platform', 'Connection', 'Polling', 'Edge assignment', 'Poll budget', 'Last change', ...(admin ? ['Actions'] : [])]
  return table(
    'Controllers',
    headers,
    items.map((c) => {
      const conn = c.connection
      const label = c.name ?? c.assetNumber
      const cells: Child[] = [
        h(
          'span',
          {},
          h('strong', {}, label),
          h('br'),
          h('span', { class: 'hint' }, `asset ${c.assetNumber}${c.firmwareVersion ? ` · fw ${c.firmwareVersion}` : ''}`),
        ),
        c.platformName,
        h(
          'span',
          {},
          `${conn.protocol} `,
          h('span', { class: 'mono' }, `${conn.ipAddress}${conn.port !== null ? `:${conn.port}` : ''}`),
          conn.cipPath ? h('span', {}, h('br'), 'CIP path ', h('span', { class: 'mono' }, conn.cipPath)) : null,
          c.cipRoute ? h('span', { class: 'hint' }, h('br'), c.cipRoute.explanation) : null,
        ),
        h(
          'span',
          {},
          `every ${conn.pollIntervalMs} ms`,
          h('br'),
          h('span', { class: 'hint' }, `timeout ${conn.timeoutMs} ms, ${conn.maxRetries} retries after ${conn.retryDelayMs} ms`),
        ),
        c.edgeId
          ? h(
              'span',
              {},
              'Edge ',
              h('span', { class: 'mono' }, c.edgeId),
              c.edgePlcId ? h('span', {}, h('br'), 'as ', h('span', { class: 'mono' }, c.edgePlcId)) : null,
            )
          : h('span', { class: 'hint' }, 'Unassigned'),
        h(
          'span',
          {},
          `${c.pollBudget.mappedTags} tags, ~${c.pollBudget.estimatedPollMs} ms (${Math.round(c.pollBudget.utilisation * 100)} %)`,
          ...c.pollBudget.warnings.map((w) => h('span', { class: 'warn-text' }, h('br'), w.message)),
        ),
        lastChangeSlot([code, c.id]),
      ]
      if (admin) {
        cells.push(
          h(
            'span',
            { class: 'row-actions' },
            h(
              'button',
              {
                type: 'button',
                class: 'secondary small',
                'aria-label': `Assign ${label} to an edge gateway`,
                onclick: () => {
                  void assign(ctx, code, c, refresh)
                },
              },
              c.edgeId ? 'Reassign' : 'Assign',
            ),
            c.edgeId
              ? h(
                  'button',
                  {
                    type: 'button',
                    class: 'secondary small',
                    'aria-label': `Unassign ${label} from edge ${c.edgeId}`,
                    onclick: () => {
                      api(ctx)
                        .send('POST', `${sitePath(code)}/controllers/${encodeURIComponent(c.id)}/unassign`)
                        .then(
                          () => {
                            ctx.notify(`${label} unassigned.`)
                            refresh()
                          },
                          (error: unknown) => ctx.notify(messageOf(error), 'error'),
                        )
                    },
                  },
                  'Unassign',
                )
              : null,
          ),
        )
      }
      return { attrs: { 'data-controller-id': c.id }, cells }
    }),
    { empty: 'No controllers in this site.' },
  )
}

async function assign(ctx: PageContext, code: string, c: Controller, refresh: () => void): Promise<void> {
  const edge = h('input', { name: 'edgeId', required: true, maxlength: 50, value: c.edgeId ?? '', autocomplete: 'off' })
  const plc = h('input', { name: 'edgePlcId', maxlength: 100, value: c.edgePlcId ?? '', autocomplete: 'off' })
  const done = await openDialog({
    title: `Assign ${c.name ?? c.assetNumber} to an edge gateway`,
    fields: [field('Edge gateway id', edge, { pointer: '/edgeId' }), field('Id of the controller on the gateway (optional)', plc, { pointer: '/edgePlcId' })],
    submitLabel: 'Assign',
    async onSubmit(data) {
      const plcId = String(data.get('edgePlcId') ?? '').trim()
      await api(ctx).send('POST', `${sitePath(code)}/controllers/${encodeURIComponent(c.id)}/assign`, {
        edgeId: String(data.get('edgeId') ?? '').trim(),
        edgePlcId: plcId || null,
      })
    },
  })
  if (done) {
    ctx.notify('Edge assignment saved.')
    refresh()
  }
}
