// The site page's electrical network section: the one-line diagram laid out automatically (supplies on top) with a
// node panel (ratings, protection, supply paths) and the islands and loops listed and highlighted. Owners and admins
// edit it here (one-line/editor.ts: add, connect, edit, delete, import a file; a refused import's problems marked on
// the file's diagram), and a node's protection check (site-protection.ts) draws the time–current curves of its supply
// path beside the coordination table. Study toggles lay the short-circuit study's fault level (I″k max) or the load
// flow's voltage on each bus of the diagram, with the whole study in tables, or say which node lacks which parameter
// when the study answers 422.
import type { EdgeRef, ElectricalEdge, ElectricalNode, Islands, LoadFlow, Loops, Network, ShortCircuit, SupplyPaths } from '../api-types.ts'
import { adoptStyles } from '../adopt-styles.ts'
import { ApiProblem, type PageContext } from '../context.ts'
import { append, clear, h, messageOf, table, type Child } from '../dom.ts'
import { createDiagram, edgeKey, edgeTypeName, typeLabel, type Diagram, type DiagramNodeInfo } from '../one-line/diagram.ts'
import { deleteEdgeDialog, deleteNodeDialog, edgeDialog, importDialog, nodeDialog, type RefusedImport } from '../one-line/editor.ts'
import { drawRefusedImport } from '../one-line/refused-import.ts'
import { protectionCheck } from './site-protection.ts'
import { layoutNetwork } from '../one-line/layout.ts'
import { isAdmin, figures, num, sitePath } from './site-parts.ts'

const CSS = `
.network-editor-bar,.node-actions{display:flex;flex-wrap:wrap;gap:.5rem;margin:.5rem 0}
.connection-list{padding-left:1.1rem;margin:.25rem 0}
.connection-list li{margin:.3rem 0}
.tcc-section{margin-top:1rem}
.tcc-body{display:grid;grid-template-columns:minmax(0,1fr) minmax(22rem,30rem);gap:1rem;align-items:start}
@media (max-width:75rem){.tcc-body{grid-template-columns:minmax(0,1fr)}}
.import-refused{border:2px solid #b3261e;border-radius:6px;padding:.5rem 1rem;background:#fdecea;margin:.5rem 0}
.import-problems li{margin:.3rem 0;overflow-wrap:anywhere}
.network-studies-bar{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center;margin:.5rem 0}
.fault-levels{margin-top:1rem;overflow-x:auto}
`

/** Above this many nodes the diagram is drawn only when asked. */
const LARGE_NETWORK = 5000

const api = (ctx: PageContext) => ctx.api

/** What a drawing of the section can ask of it: redraw after a write (selecting a node), show a refused import. */
interface Section {
  redraw(selectId?: string): Promise<void>
  refused(refusal: RefusedImport): void
  /** Replaces the time–current plot's cleanup (the plot observes its box's size). */
  plotted(cleanup: (() => void) | null): void
}

/**
 * Draws the section into `box`; every edit redraws it from the API. The returned handle acts on the current
 * drawing (destroy() on leaving the page).
 */
export async function showNetwork(box: HTMLElement, ctx: PageContext, code: string): Promise<Diagram | null> {
  adoptStyles('site-network', CSS)
  const content = h('div', { class: 'network-section' })
  box.append(content)
  let current: Diagram | null = null
  let plotCleanup: (() => void) | null = null
  let gone = false
  const reset = () => {
    plotCleanup?.()
    plotCleanup = null
    current?.destroy()
    current = null
    clear(content)
  }
  const section: Section = {
    async redraw(selectId) {
      reset()
      current = await drawNetwork(content, ctx, code, section, selectId)
      if (gone) reset()
      // The dialog's opener went with the old drawing: the keyboard carries on at the node, or at the editor's bar.
      const node = selectId ? content.querySelector<SVGGElement>(`.ol-node[data-node-id="${globalThis.CSS.escape(selectId)}"]`) : null
      ;(node ?? content.querySelector<HTMLElement>('.network-editor-bar button'))?.focus()
    },
    refused(refusal) {
      reset()
      current = drawRefusedImport(content, refusal, () => void section.redraw())
    },
    plotted(cleanup) {
      plotCleanup?.()
      plotCleanup = cleanup
    },
  }
  current = await drawNetwork(content, ctx, code, section)
  return {
    get element() {
      return content
    },
    select: (id) => current?.select(id),
    highlight: (kind, nodeIds, edgeKeys) => current?.highlight(kind, nodeIds, edgeKeys),
    annotate: (labels) => current?.annotate(labels),
    reveal: (ids) => current?.reveal(ids),
    fit: () => current?.fit(),
    destroy() {
      gone = true
      reset()
    },
  }
}

async function drawNetwork(box: HTMLElement, ctx: PageContext, code: string, section: Section, selectId?: string): Promise<Diagram | null> {
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
  const nodeIds = network.nodes.map((n) => n.id)
  const after = (selected?: string) => (done: boolean) => {
    if (done) void section.redraw(selected)
  }
  if (isAdmin(ctx)) {
    box.append(
      h(
        'div',
        { class: 'network-editor-bar', role: 'group', 'aria-label': 'Edit the network' },
        h('button', { type: 'button', class: 'secondary', onclick: () => void nodeDialog(ctx.api, base, null).then(after()) }, 'Add node'),
        h(
          'button',
          { type: 'button', class: 'secondary', disabled: network.nodeCount < 2, onclick: () => void edgeDialog(ctx.api, base, nodeIds).then(after()) },
          'Connect nodes',
        ),
        h(
          'button',
          {
            type: 'button',
            class: 'secondary',
            onclick: () =>
              void importDialog(ctx.api, base).then((outcome) => {
                if (outcome === 'imported') void section.redraw()
                else if (outcome !== 'cancelled') section.refused(outcome)
              }),
          },
          'Import network file',
        ),
      ),
    )
  }
  if (network.nodeCount === 0) {
    box.append(
      h(
        'p',
        { class: 'empty' },
        isAdmin(ctx)
          ? 'No electrical network recorded for this site yet: add its nodes, or import a network file.'
          : 'No electrical network recorded for this site.',
      ),
    )
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
      append(panel, ...nodeDetails(node, paths, diagram, { ctx, base, nodePath, edges: network.edges, nodeIds, section, plotBox: tccBox }))
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

  const tccBox = h(
    'section',
    { class: 'tcc-section', 'aria-labelledby': 'tcc-heading' },
    h('h3', { id: 'tcc-heading' }, 'Time–current curves'),
    h(
      'p',
      { class: 'hint' },
      'Select a node and check its protection: the curves of the devices on its path to a supply are drawn here, beside the coordination table.',
    ),
  )
  const studies = studyLayers(ctx, base, diagram, infos)
  box.append(
    h(
      'p',
      {},
      `${network.nodeCount} nodes, ${network.edgeCount} edges; ${islands.islandCount} island${islands.islandCount === 1 ? '' : 's'}`,
      islands.unsuppliedIslandCount > 0 ? h('span', { class: 'warn-text' }, ` (${islands.unsuppliedIslandCount} without supply)`) : '',
      `; ${loops.isRadial ? 'radial' : `${loops.loopCount} loop${loops.loopCount === 1 ? '' : 's'}`}.`,
    ),
    studies.bar,
    h('div', { class: 'network-area' }, diagram.element, panel),
    studies.section,
    tccBox,
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
  if (selectId && infos.has(selectId)) {
    diagram.select(selectId)
    void showNode(selectId, ++selection)
  }
  return diagram
}

const kA = (value: number) => `${Number(value.toPrecision(3))} kA`

/** Why buses have no I″k1 (—): the zero-sequence data they lack, the first few named, or no path to earth. */
function earthFaultHint({ incompleteBusIds, missing, unearthedBusIds }: ShortCircuit['earthFaults']) {
  const parts: string[] = []
  if (incompleteBusIds.length > 0) {
    const named = missing.slice(0, 3).map((m) => `${m.parameter} of ${m.nodeId}`)
    parts.push(`${incompleteBusIds.length} bus(es) lack zero-sequence data (${named.join(', ')}${missing.length > 3 ? `, ${missing.length - 3} more` : ''})`)
  }
  if (unearthedBusIds.length > 0) parts.push(`no path to earth at ${unearthedBusIds.join(', ')}`)
  return parts.length > 0 ? h('p', { class: 'hint earth-faults' }, `No I″k1: ${parts.join('; ')}.`) : null
}
const pu = (value: number) => `${value.toFixed(3)} pu`
const kW = (value: number) => `${Number(value.toFixed(1))} kW`

/** One study the diagram can show: what it asks, what it writes under each bus, and its table. */
interface StudyLayer<T> {
  /** The toggle's name: "Show …" / "Hide …". */
  name: string
  path: string
  busLabels(answer: T): ReadonlyMap<string, string>
  /** The table (and notes) under the diagram; the answer's own refusal (a 200 that found nothing) as a string. */
  render(answer: T): Child[] | string
}

/**
 * The study layers (issue 31): one toggle per study, one shown at a time. A toggle asks the study (kept per network
 * version by the server), writes its figure under the node each bus is named after, and lists every bus in a table;
 * a 422 is said as the API says it (the first node and parameter it lacks, and how many).
 */
function studyLayers(ctx: PageContext, base: string, diagram: Diagram, infos: ReadonlyMap<string, DiagramNodeInfo>) {
  const section = h('section', { class: 'fault-levels', 'aria-live': 'polite', hidden: true })
  const shown: Array<{ isOn(): boolean; off(): void }> = []
  const layer = <T>(spec: StudyLayer<T>) => {
    const toggle = h('button', { type: 'button', class: 'secondary', 'aria-pressed': 'false' }, `Show ${spec.name}`)
    const isOn = () => toggle.getAttribute('aria-pressed') === 'true'
    const off = () => {
      toggle.setAttribute('aria-pressed', 'false')
      toggle.textContent = `Show ${spec.name}`
      diagram.annotate(new Map())
      clear(section)
      section.hidden = true
    }
    const on = async () => {
      for (const other of shown) if (other.isOn()) other.off()
      toggle.setAttribute('aria-pressed', 'true')
      toggle.textContent = `Hide ${spec.name}`
      section.hidden = false
      clear(section)
      section.append(h('p', { class: 'hint' }, 'Computing the study…'))
      let answer: T
      try {
        answer = await api(ctx).get<T>(`${base}/${spec.path}`)
      } catch (error) {
        if (!isOn()) return
        clear(section)
        const missing = error instanceof ApiProblem ? error.missing : []
        append(
          section,
          h('p', { class: 'form-error', role: 'alert', 'data-code': (error as { code?: string }).code ?? '' }, `No ${spec.name}: ${messageOf(error)}`),
          missing.length > 0
            ? table(
                'Missing study parameters',
                ['Node', 'Parameter', 'Needed for'],
                missing.map((m) => ({ attrs: { 'data-node-id': m.nodeId, 'data-parameter': m.parameter }, cells: [m.nodeId, m.parameter, m.reason] })),
              )
            : null,
          h('p', { class: 'hint' }, "Set the missing study parameters in the node's Edit dialog; the study runs again after every change of the network."),
        )
        return
      }
      if (!isOn()) return
      const rendered = spec.render(answer)
      clear(section)
      if (typeof rendered === 'string') {
        section.append(h('p', { class: 'form-error', role: 'alert' }, rendered))
        return
      }
      diagram.annotate(new Map([...spec.busLabels(answer)].filter(([busId]) => infos.has(busId))))
      append(section, ...rendered)
    }
    toggle.addEventListener('click', () => {
      if (isOn()) off()
      else void on()
    })
    shown.push({ isOn, off })
    return toggle
  }
  const bar = h(
    'div',
    { class: 'network-studies-bar', role: 'group', 'aria-label': 'Studies' },
    layer<ShortCircuit>({
      name: 'fault levels',
      // The layer shows no contributions: it asks for none (the default lists the 5 largest per bus).
      path: 'studies/short-circuit?contributions=none',
      busLabels: (study) => new Map(study.buses.map((b) => [b.busId, `I″k ${kA(b.ikssMaxKa)}`])),
      render: (study) => [
        h('h3', {}, 'Fault levels'),
        h(
          'p',
          { class: 'hint' },
          `Three-phase, IEC 60909-0 (c-factors LV ${study.assumed.cFactors.lv.max}/${study.assumed.cFactors.lv.min}, ` +
            `MV/HV ${study.assumed.cFactors.mvHv.max}/${study.assumed.cFactors.mvHv.min}); I″k max is written under each bus on the diagram. ` +
            'I″k1: line to earth, where the zero-sequence data allows.',
        ),
        table(
          'Short-circuit currents by bus',
          ['Bus', 'Nodes', 'Un', 'I″k max', 'I″k min', 'ip', 'X/R', 'I″k1 max', 'I″k1 min'],
          study.buses.map((b) => ({
            attrs: { 'data-bus-id': b.busId },
            cells: [
              b.busId,
              b.nodeIds.join(', '),
              `${Number(b.nominalVoltageKv.toPrecision(4))} kV`,
              kA(b.ikssMaxKa),
              kA(b.ikssMinKa),
              kA(b.ipKa),
              Number(b.xrRatio.toPrecision(3)),
              b.ikssEarthMaxKa === null ? '—' : kA(b.ikssEarthMaxKa),
              b.ikssEarthMinKa === null ? '—' : kA(b.ikssEarthMinKa),
            ],
          })),
          { empty: 'No bus is fed by a utility supply or a generator.' },
        ),
        study.unsuppliedBusIds.length > 0 ? h('p', { class: 'hint' }, `Not fed (no fault current): ${study.unsuppliedBusIds.join(', ')}`) : null,
        earthFaultHint(study.earthFaults),
      ],
    }),
    layer<LoadFlow>({
      name: 'voltages',
      path: 'studies/load-flow',
      busLabels: (flow) => new Map(flow.buses.map((b) => [b.busId, `U ${pu(b.voltagePu)}`])),
      render: (flow) =>
        !flow.converged
          ? `No voltages: the load flow found no solution (${flow.note ?? `${flow.iterations} iterations`}).`
          : [
              h('h3', {}, 'Voltages and flows'),
              h(
                'p',
                { class: 'hint' },
                `Newton–Raphson load flow, converged in ${flow.iterations} iteration${flow.iterations === 1 ? '' : 's'}; ` +
                  `|U| is written under each bus on the diagram. Losses ${kW(flow.branches.reduce((sum, b) => sum + b.lossKw, 0))}.`,
              ),
              table(
                'Bus voltages',
                ['Bus', 'Nodes', 'Un', '|U|', 'U', 'Angle', 'Load'],
                flow.buses.map((b) => ({
                  attrs: { 'data-bus-id': b.busId, 'data-voltage-pu': b.voltagePu },
                  cells: [
                    b.busId,
                    b.nodeIds.join(', '),
                    `${Number(b.nominalVoltageKv.toPrecision(4))} kV`,
                    pu(b.voltagePu),
                    `${Math.round(b.voltageV)} V`,
                    `${b.angleDeg.toFixed(2)}°`,
                    kW(b.pLoadKw),
                  ],
                })),
                { empty: 'No bus is fed by a utility supply or a generator.' },
              ),
              table(
                'Branch flows',
                ['Branch', 'From → to', 'P in', 'Current', 'Losses', 'Loading'],
                flow.branches.map((b) => ({
                  attrs: { 'data-branch-id': b.branchId },
                  cells: [
                    b.nodeId,
                    `${b.fromBusId} → ${b.toBusId}`,
                    kW(b.pFromKw),
                    `${Math.round(Math.max(b.currentFromA, b.currentToA))} A`,
                    kW(b.lossKw),
                    b.loadingPercent === null ? '—' : h('span', { class: b.loadingPercent > 100 ? 'warn-text' : '' }, `${Math.round(b.loadingPercent)} %`),
                  ],
                })),
                { empty: 'No cable, line or transformer carries power.' },
              ),
            ],
    }),
  )
  return { bar, section }
}

interface NodeContext {
  ctx: PageContext
  base: string
  nodePath: string
  edges: ElectricalEdge[]
  nodeIds: string[]
  section: Section
  /** Where the protection check draws the time–current plot and the coordination table. */
  plotBox: HTMLElement
}

function nodeDetails(node: ElectricalNode, paths: SupplyPaths, diagram: Diagram, at: NodeContext): Child[] {
  const { ctx, base, nodePath, section } = at
  const client = ctx.api
  const connections = at.edges.filter((e) => e.sourceId === node.id || e.targetId === node.id)
  const after = (selected?: string) => (done: boolean) => {
    if (done) void section.redraw(selected)
  }
  const out: Child[] = [
    h('h3', { id: 'node-panel-heading' }, node.name ? `${node.name} (${node.id})` : node.id),
    h('p', { class: 'hint' }, typeLabel(node.nodeType)),
    isAdmin(ctx)
      ? h(
          'div',
          { class: 'node-actions', role: 'group', 'aria-label': `Edit ${node.id}` },
          h('button', { type: 'button', class: 'secondary small', onclick: () => void nodeDialog(client, base, node).then(after(node.id)) }, 'Edit'),
          h(
            'button',
            { type: 'button', class: 'secondary small', onclick: () => void edgeDialog(client, base, at.nodeIds, node.id).then(after(node.id)) },
            'Connect…',
          ),
          h(
            'button',
            { type: 'button', class: 'danger small', onclick: () => void deleteNodeDialog(client, base, node, connections.length).then(after()) },
            'Delete',
          ),
        )
      : null,
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
  out.push(
    ...protectionCheck(node, paths, {
      api: client,
      nodePath,
      plotBox: at.plotBox,
      plotted: section.plotted,
      // The path the check walked (the supply picker's) is the one highlighted on the diagram.
      checked: (p) => diagram.highlight('path', p.nodeIds, p.edges.map(edgeKey)),
    }),
  )

  out.push(h('h4', {}, 'Connections'))
  out.push(
    connections.length === 0
      ? h('p', { class: 'hint' }, 'Not connected.')
      : h(
          'ul',
          { class: 'connection-list' },
          ...connections.map((e) =>
            h(
              'li',
              {},
              h('span', { class: 'mono' }, `${e.sourceId} – ${e.targetId}`),
              ` (${edgeTypeName(e.edgeType)}) `,
              isAdmin(ctx)
                ? h(
                    'button',
                    {
                      type: 'button',
                      class: 'secondary small',
                      'aria-label': `Delete the connection ${e.sourceId} – ${e.targetId} (${edgeTypeName(e.edgeType)})`,
                      onclick: () => void deleteEdgeDialog(client, base, e).then(after(node.id)),
                    },
                    'Delete',
                  )
                : null,
            ),
          ),
        ),
  )
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
