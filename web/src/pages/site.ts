// Site page (/sites/:code): the site's fields, its controllers (connection settings, edge assignment, poll budget),
// its instances (paged), and the electrical network as a one-line diagram laid out automatically (supplies on
// top) with a node panel (ratings, protection, supply paths) and the islands and loops listed and highlighted.
// The site, each controller and each instance say which side last changed them (issue 26, last-change.ts).
import { adoptStyles } from '../adopt-styles.ts'
import type { Controller, Coordination, EdgeRef, ElectricalNode, Instance, Islands, Loops, Network, Site, SupplyPaths, TripTime } from '../api-types.ts'
import { ApiProblem, type Api, type Page, type PageContext } from '../context.ts'
import { openDialog } from '../dialog.ts'
import { append, clear, field, h, messageOf, table, time, type Child } from '../dom.ts'
import { createDiagram, edgeKey, edgeTypeName, typeLabel, type Diagram, type DiagramNodeInfo } from '../one-line/diagram.ts'
import { layoutNetwork } from '../one-line/layout.ts'
import { fillLastChanges, lastChangeSlot } from '../last-change.ts'
import { pager, type PageOf } from '../paging.ts'

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

/** Above this many nodes the diagram is drawn only when asked. */
const LARGE_NETWORK = 5000

const api = (ctx: PageContext) => ctx.api
const sitePath = (code: string) => `/api/sites/${encodeURIComponent(code)}`
const isAdmin = (ctx: PageContext) => ctx.principal.role === 'owner' || ctx.principal.role === 'admin'
const num = (value: number | null, unit: string, digits = 2) => (value === null ? '—' : `${Number(value.toFixed(digits))} ${unit}`)

function figures(pairs: Array<[string, Child]>): HTMLDListElement {
  const dl = h('dl', { class: 'figures' })
  for (const [term, value] of pairs) dl.append(h('dt', {}, term), h('dd', {}, value))
  return dl
}

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

async function showNetwork(box: HTMLElement, ctx: PageContext, code: string): Promise<Diagram | null> {
  const base = `${sitePath(code)}/electrical`
  let network: Network
  let islands: Islands
  let loops: Loops
  try {
    ;[network, islands, loops] = await Promise.all([
      api(ctx).get<Network>(`${base}/network`),
      api(ctx).get<Islands>(`${base}/topology/islands`),
      api(ctx).get<Loops>(`${base}/topology/loops`, { maxLoops: 200 }),
    ])
  } catch (error) {
    box.append(h('p', { class: 'form-error', role: 'alert' }, messageOf(error)))
    return null
  }
  if (network.nodeCount === 0) {
    box.append(h('p', { class: 'empty' }, 'No electrical network recorded for this site (PUT …/electrical/network loads one).'))
    return null
  }

  if (network.nodeCount > LARGE_NETWORK) {
    // Thousands of SVG nodes take a while to draw on a tablet: the summary and lists first, the drawing on request.
    const draw = h('button', { type: 'button', class: 'secondary' }, `Draw the diagram (${network.nodeCount} nodes)`)
    const notice = h('p', { class: 'notice' }, `This network has ${network.nodeCount} nodes; drawing it may take a few seconds. `, draw)
    box.append(notice)
    await new Promise<void>((resolve) =>
      draw.addEventListener(
        'click',
        () => {
          notice.remove()
          resolve()
        },
        { once: true },
      ),
    )
  }
  const layout = layoutNetwork(network.nodes, network.edges)
  const infos = new Map<string, DiagramNodeInfo>(network.nodes.map((n) => [n.id, n]))
  const panel = h(
    'aside',
    { class: 'node-panel', 'aria-labelledby': 'node-panel-heading', 'aria-live': 'polite' },
    h('h3', { id: 'node-panel-heading' }, 'Node'),
    h('p', { class: 'hint' }, 'Select a node on the diagram (click, or Tab to it and press Enter) to see its ratings, protection and supply path.'),
  )
  let selection = 0
  const diagram = createDiagram(layout, infos, {
    label: `One-line diagram of ${code}: ${network.nodeCount} nodes, ${network.edgeCount} edges; supplies on the top row. Arrow keys move between nodes.`,
    onSelect: (id) => {
      void showNode(id, ++selection)
    },
  })
  async function showNode(id: string, mine: number): Promise<void> {
    clear(panel)
    panel.setAttribute('aria-busy', 'true')
    panel.append(h('h3', { id: 'node-panel-heading' }, id), h('p', { class: 'hint' }, 'Loading…'))
    try {
      const nodePath = `${base}/nodes/${encodeURIComponent(id)}`
      const [node, paths] = await Promise.all([api(ctx).get<ElectricalNode>(nodePath), api(ctx).get<SupplyPaths>(`${nodePath}/supply-paths`)])
      if (mine !== selection) return
      clear(panel)
      append(panel, ...nodeDetails(node, paths, diagram, ctx.api, nodePath))
      const nearest = paths.paths[0]
      diagram.highlight('path', nearest?.nodeIds ?? [], nearest?.edges.map(edgeKey) ?? [])
    } catch (error) {
      if (mine !== selection) return
      clear(panel)
      panel.append(h('h3', { id: 'node-panel-heading' }, id), h('p', { class: 'form-error', role: 'alert' }, messageOf(error)))
    } finally {
      if (mine === selection) panel.removeAttribute('aria-busy')
    }
  }

  // Loops: every loop edge marked, the closing edge (candidate normally-open point) dashed.
  const loopEdges = new Set<string>()
  for (const loop of loops.loops) {
    for (const e of loop.edges) loopEdges.add(edgeKey(e))
    loopEdges.add(`closing:${edgeKey(loop.closingEdge)}`)
  }
  diagram.highlight('loop', [], loopEdges)
  const unsupplied = islands.islands.filter((i) => !i.hasSupply)
  diagram.highlight(
    'island',
    unsupplied.flatMap((i) => i.nodeIds),
  )

  const focusOn = (nodeIds: string[], edges: EdgeRef[]) => {
    diagram.highlight('focus', nodeIds, edges.map(edgeKey))
    diagram.reveal(nodeIds)
  }
  const nodeList = (ids: string[], max = 12) => `${ids.slice(0, max).join(', ')}${ids.length > max ? `, … (${ids.length - max} more)` : ''}`
  const islandList = h(
    'ol',
    {},
    ...islands.islands.map((island, i) =>
      h(
        'li',
        {},
        h(
          'span',
          { class: island.hasSupply ? '' : 'warn-text' },
          `Island ${i + 1}: ${island.nodeCount} node${island.nodeCount === 1 ? '' : 's'}, `,
          island.hasSupply ? `supplied by ${island.supplyIds.join(', ')}` : 'no supply (dead unless energised from elsewhere)',
        ),
        ' ',
        h(
          'button',
          { type: 'button', class: 'secondary small', 'aria-label': `Show island ${i + 1} on the diagram`, onclick: () => focusOn(island.nodeIds, []) },
          'Show',
        ),
        h('br'),
        h('span', { class: 'hint' }, nodeList(island.nodeIds)),
      ),
    ),
  )
  const loopList =
    loops.loops.length === 0
      ? h('p', { class: 'ok-text' }, 'Radial: no loops.')
      : h(
          'ol',
          {},
          ...loops.loops.map((loop, i) =>
            h(
              'li',
              {},
              `Loop ${i + 1}: ${nodeList(loop.nodeIds)}; closed by `,
              h('span', { class: 'mono' }, `${loop.closingEdge.sourceId} – ${loop.closingEdge.targetId}`),
              ` (${edgeTypeName(loop.closingEdge.edgeType)}) `,
              h(
                'button',
                {
                  type: 'button',
                  class: 'secondary small',
                  'aria-label': `Show loop ${i + 1} on the diagram`,
                  onclick: () => focusOn(loop.nodeIds, loop.edges),
                },
                'Show',
              ),
            ),
          ),
        )

  box.append(
    h(
      'p',
      {},
      `${network.nodeCount} nodes, ${network.edgeCount} edges; ${islands.islandCount} island${islands.islandCount === 1 ? '' : 's'}`,
      islands.unsuppliedIslandCount > 0 ? h('span', { class: 'warn-text' }, ` (${islands.unsuppliedIslandCount} without supply)`) : '',
      `; ${loops.isRadial ? 'radial' : `${loops.loopCount} loop${loops.loopCount === 1 ? '' : 's'}`}.`,
    ),
    h('div', { class: 'network-area' }, diagram.element, panel),
    h(
      'div',
      { class: 'topology-lists' },
      h('section', { 'aria-labelledby': 'site-islands' }, h('h3', { id: 'site-islands' }, 'Islands'), islandList),
      h(
        'section',
        { 'aria-labelledby': 'site-loops' },
        h('h3', { id: 'site-loops' }, 'Loops'),
        loops.isTruncated ? h('p', { class: 'hint' }, `The first ${loops.loops.length} of ${loops.loopCount} loops.`) : null,
        loopList,
      ),
    ),
  )
  diagram.fit()
  return diagram
}

function nodeDetails(node: ElectricalNode, paths: SupplyPaths, diagram: Diagram, client: Api, nodePath: string): Child[] {
  const out: Child[] = [
    h('h3', { id: 'node-panel-heading' }, node.name ? `${node.name} (${node.id})` : node.id),
    h('p', { class: 'hint' }, typeLabel(node.nodeType)),
    h('h4', {}, 'Ratings'),
    figures([
      [
        'Rated voltage',
        node.ratedVoltageV === null ? '—' : node.ratedVoltageV >= 1000 ? `${Number((node.ratedVoltageV / 1000).toFixed(3))} kV` : `${node.ratedVoltageV} V`,
      ],
      ['Rated current', num(node.ratedCurrentA, 'A')],
      ['Rated power', num(node.ratedPowerKw, 'kW')],
      ['Impedance', num(node.impedanceOhms, 'Ω', 4)],
      ['Cable', node.cableSize ?? '—'],
      ['Cable length', num(node.cableLengthM, 'm', 1)],
    ]),
    node.description ? h('p', {}, node.description) : null,
    h('h4', {}, 'Protection'),
  ]
  const hasSettings = Boolean(node.protectionCurve) && (node.protectionPickupA ?? 0) > 0 && (node.protectionTms ?? 0) > 0
  out.push(
    figures([
      ['Curve', node.protectionCurve || '—'],
      ['Pickup', num(node.protectionPickupA, 'A')],
      ['TMS', node.protectionTms === null ? '—' : String(node.protectionTms)],
    ]),
  )
  const result = h('div', { 'aria-live': 'polite' })
  if (hasSettings || paths.isSupplied) {
    const current = h('input', {
      type: 'number',
      name: 'faultCurrentA',
      min: 0,
      step: 'any',
      required: true,
      value: String(Math.round((node.protectionPickupA ?? 100) * 10)),
    })
    const form = h(
      'form',
      { class: 'filters', 'aria-label': 'Protection check' },
      field('Fault current (A)', current),
      h('button', { type: 'submit', class: 'secondary' }, 'Check protection'),
    )
    const check = async () => {
      const faultCurrentA = Number(current.value)
      clear(result)
      if (!Number.isFinite(faultCurrentA) || faultCurrentA < 0) {
        result.append(h('p', { class: 'form-error' }, 'Enter a fault current ≥ 0.'))
        return
      }
      const [trip, coordination] = await Promise.allSettled([
        hasSettings ? client.get<TripTime>(`${nodePath}/trip-time`, { faultCurrentA }) : Promise.resolve(null),
        paths.isSupplied ? client.get<Coordination>(`${nodePath}/coordination`, { faultCurrentA }) : Promise.resolve(null),
      ])
      if (trip.status === 'fulfilled' && trip.value) {
        const t = trip.value
        result.append(
          h(
            'p',
            {},
            t.trips && t.tripTimeS !== null
              ? `Trips in ${Number(t.tripTimeS.toFixed(3))} s at ${Number(t.multiple.toFixed(2))}× pickup (${t.curveLabel}).`
              : `Does not trip at ${Number(t.multiple.toFixed(2))}× pickup.`,
          ),
          h('p', { class: 'hint' }, t.formula),
        )
      } else if (trip.status === 'rejected') result.append(h('p', { class: 'form-error' }, messageOf(trip.reason)))
      if (coordination.status === 'fulfilled' && coordination.value) {
        const c = coordination.value
        append(
          result,
          h(
            'p',
            { class: c.isCoordinated ? 'ok-text' : 'warn-text' },
            c.isCoordinated
              ? `Coordinated towards ${c.supplyId}.`
              : `${c.violationCount} grading violation${c.violationCount === 1 ? '' : 's'} towards ${c.supplyId}.`,
          ),
          table(
            'Protection coordination',
            ['Device', 'Curve', 'Trip time', 'Margin', 'Status'],
            c.rows.map((r) => [
              r.deviceId,
              `${r.curveLabel} ${r.pickupA} A × ${r.tms}`,
              r.tripTimeS === null ? 'no trip' : `${Number(r.tripTimeS.toFixed(3))} s`,
              r.marginS === null ? '—' : `${Number(r.marginS.toFixed(3))} s`,
              h('span', { class: r.status === 'OK' ? 'ok-text' : 'warn-text' }, r.status),
            ]),
            { empty: 'No protective device with usable settings on the path.' },
          ),
          c.skipped.length > 0 ? h('p', { class: 'hint' }, `Skipped (incomplete settings): ${c.skipped.map((s) => s.nodeId).join(', ')}`) : null,
        )
      } else if (coordination.status === 'rejected') result.append(h('p', { class: 'form-error' }, messageOf(coordination.reason)))
    }
    form.addEventListener('submit', (e) => {
      e.preventDefault()
      void check()
    })
    if (!hasSettings)
      out.push(h('p', { class: 'hint' }, "No complete protection settings on this node (curve, pickup and TMS); the path's devices can still be checked."))
    out.push(form, result)
    if (hasSettings) void check()
  } else {
    out.push(h('p', { class: 'hint' }, 'No protection settings.'))
  }

  out.push(h('h4', {}, 'Supply path'))
  if (!paths.isSupplied) {
    out.push(h('p', { class: 'warn-text' }, 'Not supplied: no path to any supply.'))
  } else {
    const list = h(
      'ol',
      { class: 'path-list' },
      ...paths.paths.map((p) =>
        h(
          'li',
          { 'data-supply-id': p.supplyId },
          h('strong', {}, p.supplyId),
          ` — ${p.hops} hop${p.hops === 1 ? '' : 's'}: `,
          h('span', { class: 'mono supply-path' }, p.nodeIds.join(' → ')),
          ' ',
          h(
            'button',
            {
              type: 'button',
              class: 'secondary small',
              'aria-label': `Highlight the path to ${p.supplyId}`,
              onclick: () => {
                diagram.highlight('path', p.nodeIds, p.edges.map(edgeKey))
                diagram.reveal(p.nodeIds)
              },
            },
            'Highlight',
          ),
        ),
      ),
    )
    out.push(list)
  }
  if (Object.keys(node.tagBindings).length > 0) {
    out.push(h('h4', {}, 'Tag bindings'), figures(Object.entries(node.tagBindings).map(([k, v]): [string, Child] => [k, h('span', { class: 'mono' }, v)])))
  }
  return out
}
