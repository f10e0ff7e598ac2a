// The site page's electrical network section: the one-line diagram laid out automatically (supplies on top) with a
// node panel (ratings, protection, supply paths) and the islands and loops listed and highlighted.
import type { Coordination, EdgeRef, ElectricalNode, Islands, Loops, Network, SupplyPaths, TripTime } from '../api-types.ts'
import type { Api, PageContext } from '../context.ts'
import { append, clear, field, h, messageOf, table, type Child } from '../dom.ts'
import { createDiagram, edgeKey, edgeTypeName, typeLabel, type Diagram, type DiagramNodeInfo } from '../one-line/diagram.ts'
import { layoutNetwork } from '../one-line/layout.ts'
import { figures, num, sitePath } from './site-parts.ts'

/** Above this many nodes the diagram is drawn only when asked. */
const LARGE_NETWORK = 5000

const api = (ctx: PageContext) => ctx.api

export async function showNetwork(box: HTMLElement, ctx: PageContext, code: string): Promise<Diagram | null> {
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
