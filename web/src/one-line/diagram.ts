// The one-line diagram as SVG: a box per node (shape and colour by role, symbol by type), a line per edge (style
// by type), pan (drag), zoom (wheel, pinch, buttons), keyboard navigation (Tab, arrows, Enter/Space selects) and
// highlights (supply path, loops, unsupplied islands) set by the page from the API's topology answers.
import { EDGE_TYPES, NODE_TYPES } from '../../../src/modules/electrical/codes.ts'
import { adoptStyles } from '../adopt-styles.ts'
import type { Layout, LayoutNode } from './layout.ts'

const SVG = 'http://www.w3.org/2000/svg'

export interface DiagramNodeInfo {
  readonly id: string
  readonly name: string | null
  readonly nodeType: number
}

export type HighlightKind = 'path' | 'loop' | 'island' | 'focus' | 'problem'

export interface Diagram {
  /** The wrapper (toolbar + SVG) to insert into the page. */
  readonly element: HTMLElement
  /** Marks a node selected (null: none) without calling onSelect. */
  select(id: string | null): void
  /** Replaces the highlight of one kind: these nodes and edges (`edgeKey`s). */
  highlight(kind: HighlightKind, nodeIds: Iterable<string>, edgeKeys?: Iterable<string>): void
  /** Replaces the short texts drawn under nodes (a study's results, e.g. a bus's fault level); an empty map clears them. */
  annotate(labels: ReadonlyMap<string, string>): void
  /** Pans and zooms so that these nodes are in view. */
  reveal(nodeIds: Iterable<string>): void
  fit(): void
  destroy(): void
}

export interface DiagramOptions {
  onSelect(id: string): void
  /** Accessible name of the diagram. */
  label?: string
  /**
   * Messages about nodes and edges (by id and `edgeKey`), e.g. a refused import's problems: each is marked, its
   * messages in its tooltip (a node's title is also its accessible name), a node with a "!" badge and the messages
   * under its box.
   */
  problems?: ReadonlyMap<string, readonly string[]>
}

/** Identity of an edge, as the topology answers name edges. */
export const edgeKey = (e: { sourceId: string; targetId: string; edgeType: number }) => `${e.sourceId}\u0000${e.targetId}\u0000${e.edgeType}`

/**
 * The node's one-line symbol, drawn in a 22×22 box at (x, y): IEC-style shapes (circle with G or M, two circles for
 * a transformer, breaker square with a cross, fuse, isolator blade, capacitor plates, earth bars, battery cells).
 */
function symbol(nodeType: number, x: number, y: number): SVGGElement {
  const g = svg('g', { class: 'ol-symbol', transform: `translate(${x} ${y})`, 'aria-hidden': 'true' })
  const line = (x1: number, y1: number, x2: number, y2: number) => g.append(svg('line', { x1, y1, x2, y2 }))
  const circle = (cx: number, cy: number, r: number) => g.append(svg('circle', { cx, cy, r }))
  const letter = (text: string) => g.append(svg('text', { x: 11, y: 15.5, 'text-anchor': 'middle', class: 'ol-symbol-text' }, text))
  switch (nodeType) {
    case 0: // utility supply: a grid infeed (a circle with a sine)
      circle(11, 11, 9)
      g.append(svg('path', { d: 'M4 11 Q7.5 5 11 11 T18 11' }))
      break
    case 1:
      circle(11, 11, 9)
      letter('G')
      break
    case 2:
      circle(11, 7.5, 6)
      circle(11, 14.5, 6)
      break
    case 3:
    case 4:
      g.append(svg('rect', { x: 1, y: 8, width: 20, height: 6, class: 'ol-filled' }))
      break
    case 5:
      g.append(svg('rect', { x: 3, y: 3, width: 16, height: 16 }))
      line(3, 3, 19, 19)
      line(19, 3, 3, 19)
      break
    case 6:
      g.append(svg('rect', { x: 6, y: 2, width: 10, height: 18 }))
      line(11, 0, 11, 22)
      break
    case 7:
      line(11, 0, 11, 5)
      line(11, 5, 19, 17)
      line(11, 17, 11, 22)
      break
    case 8:
      circle(11, 11, 9)
      letter('M')
      break
    case 9:
      g.append(svg('rect', { x: 2, y: 2, width: 18, height: 18 }))
      line(2, 20, 20, 2)
      break
    case 10:
      g.append(svg('path', { d: 'M3 5 L19 5 L11 19 Z' }))
      break
    case 11:
      line(11, 0, 11, 8)
      line(3, 8, 19, 8)
      line(3, 14, 19, 14)
      line(11, 14, 11, 22)
      break
    case 12:
      line(11, 0, 11, 8)
      line(2, 8, 20, 8)
      line(5, 13, 17, 13)
      line(8, 18, 14, 18)
      break
    case 13:
      line(4, 7, 18, 7)
      line(8, 11, 14, 11)
      line(4, 15, 18, 15)
      line(8, 19, 14, 19)
      break
    default:
      circle(11, 11, 4)
  }
  return g
}

const CSS = `
.one-line{display:flex;flex-direction:column;gap:.5rem;min-width:0}
.one-line-toolbar{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center}
.one-line-toolbar button{min-width:2.75rem;min-height:2.75rem}
.one-line-legend{display:flex;flex-wrap:wrap;gap:.25rem 1rem;font-size:.85rem;margin:0;padding:0;list-style:none}
.one-line-legend li{display:flex;align-items:center;gap:.35rem}
.one-line-legend svg{width:28px;height:14px}
.one-line svg.one-line-canvas{width:100%;border:1px solid #c6ccd4;border-radius:6px;background:#fbfcfd;touch-action:none;cursor:grab;user-select:none}
.one-line svg.one-line-canvas.panning{cursor:grabbing}
.ol-node rect{fill:#fff;stroke:#5b6573;stroke-width:1.5}
.ol-node text{font:12px system-ui,sans-serif;fill:#1c232b;pointer-events:none}
.ol-symbol line,.ol-symbol circle,.ol-symbol rect,.ol-symbol path{fill:none;stroke:#1c232b;stroke-width:1.6}
.ol-symbol .ol-filled{fill:#1c232b}
.ol-node text.ol-symbol-text{font:700 11px system-ui,sans-serif;fill:#1c232b}
.ol-node .ol-id{font-size:10px;fill:#4a5360}
.ol-node{cursor:pointer;outline:none}
.ol-role-supply rect{fill:#e6f4ea;stroke:#1e7a3a;stroke-width:2.5}
.ol-role-busbar rect{fill:#eef1f6;stroke:#1c232b;stroke-width:2.5}
.ol-role-switching rect{fill:#fff7e6}
.ol-role-conversion rect{fill:#f1ecfb}
.ol-role-load rect{fill:#fdfdfd}
.ol-node:focus-visible rect,.ol-node:focus rect{stroke:#0b57d0;stroke-width:4}
.ol-node.ol-selected rect{stroke:#0b57d0;stroke-width:4;fill:#dbe7fd}
.ol-node.ol-path rect{stroke:#0b57d0;stroke-width:3.5}
.ol-node.ol-island rect{stroke:#b3261e;stroke-dasharray:5 3;stroke-width:2.5}
.ol-node.ol-loop rect{stroke:#b35c00;stroke-width:3}
.ol-node.ol-focus rect{stroke:#6a1b9a;stroke-width:4}
.ol-node.ol-problem rect{stroke:#b3261e;stroke-width:4;fill:#fdecea}
.ol-badge circle{fill:#b3261e;stroke:#fff;stroke-width:1.5}
.ol-node text.ol-badge-text{font:700 12px system-ui,sans-serif;fill:#fff}
.ol-node text.ol-problem-text{font:600 10px system-ui,sans-serif;fill:#b3261e}
.ol-edge{fill:none;stroke:#5b6573;stroke-width:1.6}
.ol-edge-OverheadLine{stroke-dasharray:8 4}
.ol-edge-BusbarLink{stroke-width:3.5;stroke:#1c232b}
.ol-edge-TransformerWinding{stroke-width:2.5;stroke:#5e35b1}
.ol-edge-BusTie{stroke-dasharray:2 3;stroke-width:2.5}
.ol-edge.ol-loop{stroke:#b35c00;stroke-width:3.5}
.ol-edge.ol-closing{stroke:#b35c00;stroke-width:4;stroke-dasharray:6 3}
.ol-edge.ol-path{stroke:#0b57d0;stroke-width:4.5;stroke-dasharray:none}
.ol-edge.ol-focus{stroke:#6a1b9a;stroke-width:4}
.ol-edge.ol-problem{stroke:#b3261e;stroke-width:4.5;stroke-dasharray:3 3}
.ol-component{fill:none;stroke:none}
.ol-component.ol-unsupplied{stroke:#b3261e;stroke-dasharray:6 4;fill:#fdecea;fill-opacity:.35}
.ol-component-label{font:600 12px system-ui,sans-serif;fill:#b3261e}
.ol-annotation{font:600 11px system-ui,sans-serif;fill:#8a1c14;paint-order:stroke;stroke:#fbfcfd;stroke-width:3px;stroke-linejoin:round}
`

const MIN_SCALE = 0.02
const MAX_SCALE = 4
const MARGIN = 40

function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number> = {}, text?: string): SVGElementTagNameMap[K] {
  const el = document.createElementNS(SVG, tag)
  for (const [name, value] of Object.entries(attrs)) el.setAttribute(name, String(value))
  if (text !== undefined) el.textContent = text
  return el
}

const shorten = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text)

/**
 * A node's label in at most `lines` lines of `width` characters, broken between words (a longer word is split);
 * what does not fit ends the last line with "…" (the whole label is the node's tooltip and accessible name).
 */
export function wrapLabel(text: string, width: number, lines: number): string[] {
  const out: string[] = []
  let rest = text.trim().replace(/\s+/g, ' ')
  while (rest && out.length < lines) {
    if (rest.length <= width) {
      out.push(rest)
      rest = ''
      break
    }
    const space = rest.lastIndexOf(' ', width)
    const cut = space > 0 ? space : width
    out.push(rest.slice(0, cut))
    rest = rest.slice(cut).trimStart()
  }
  if (rest) out[out.length - 1] = shorten(`${out[out.length - 1]} ${rest}`, width)
  return out
}

export function typeLabel(code: number): string {
  return NODE_TYPES[code]?.label ?? `type ${code}`
}

export function edgeTypeName(code: number): string {
  return EDGE_TYPES[code]?.name ?? `Edge${code}`
}

export function createDiagram(layout: Layout, infos: ReadonlyMap<string, DiagramNodeInfo>, options: DiagramOptions): Diagram {
  adoptStyles('one-line', CSS)
  const canvas = svg('svg', { class: 'one-line-canvas', role: 'group', 'aria-label': options.label ?? 'One-line diagram' })
  const viewport = svg('g', { class: 'ol-viewport' })
  const componentLayer = svg('g')
  const edgeLayer = svg('g', { 'aria-hidden': 'true' })
  const nodeLayer = svg('g')
  // Under the nodes' boxes; the page states the same values in text (a table), so the drawing's copy is hidden.
  const annotationLayer = svg('g', { class: 'ol-annotations', 'aria-hidden': 'true' })
  viewport.append(componentLayer, edgeLayer, nodeLayer, annotationLayer)
  canvas.append(viewport)

  for (const c of layout.components) {
    if (c.hasSupply) continue
    componentLayer.append(svg('rect', { class: 'ol-component ol-unsupplied', x: c.x - 12, y: c.y - 30, width: c.width + 24, height: c.height + 42, rx: 10 }))
    componentLayer.append(svg('text', { class: 'ol-component-label', x: c.x - 6, y: c.y - 14 }, 'Island: no supply'))
  }

  const problems = options.problems ?? new Map<string, readonly string[]>()
  const edgeEls = new Map<string, SVGPathElement>()
  for (const e of layout.edges) {
    const d = e.points.map(([x, y], i) => `${i === 0 ? 'M' : 'L'}${x} ${y}`).join(' ')
    const path = svg('path', { d, class: `ol-edge ol-edge-${edgeTypeName(e.edgeType)}` })
    const messages = problems.get(edgeKey(e))
    if (messages) path.append(svg('title', {}, `${e.sourceId} – ${e.targetId}: ${messages.join('; ')}`))
    edgeLayer.append(path)
    edgeEls.set(edgeKey(e), path)
  }

  const nodeEls = new Map<string, SVGGElement>()
  const placed = new Map<string, LayoutNode>()
  // Rows of each component, for arrow-key navigation.
  const rows = new Map<string, LayoutNode[]>()
  for (const n of layout.nodes) {
    placed.set(n.id, n)
    const rowKey = `${n.component}:${n.layer}`
    const row = rows.get(rowKey) ?? []
    row.push(n)
    rows.set(rowKey, row)
    const info = infos.get(n.id)
    const role = NODE_TYPES[n.nodeType]?.role ?? 'load'
    const name = info?.name ?? ''
    const messages = problems.get(n.id)
    const said = messages ? `. Problem: ${messages.join('; ')}` : ''
    const g = svg('g', {
      class: `ol-node ol-role-${role}`,
      transform: `translate(${n.x} ${n.y})`,
      tabindex: '-1',
      role: 'button',
      'aria-pressed': 'false',
      'data-node-id': n.id,
      'data-node-type': n.nodeType,
      'data-layer': n.layer,
    })
    // The name comes from the title (SVG-AAM), whole where the box shows it wrapped or shortened; an aria-label would
    // have to contain the visible text, which a shortened label no longer does (WCAG 2.5.3).
    g.append(svg('title', {}, `${name ? `${name} — ${n.id}` : n.id} (${typeLabel(n.nodeType)})${said}`))
    g.append(svg('rect', { width: n.width, height: n.height, rx: role === 'supply' ? n.height / 2 : role === 'busbar' ? 2 : 6 }))
    g.append(symbol(n.nodeType, 6, n.height / 2 - 11))
    // A long name wraps onto two lines (the id line then moves down); the tooltip has it whole.
    const label = wrapLabel(name || n.id, 12, 2)
    label.forEach((line, i) => g.append(svg('text', { class: 'ol-label', x: 33, y: label.length > 1 ? 14 + 12 * i : 18 }, line)))
    g.append(svg('text', { class: 'ol-id', x: 33, y: label.length > 1 ? 39 : 33 }, shorten(name ? n.id : typeLabel(n.nodeType), 15)))
    if (messages) {
      g.classList.add('ol-problem')
      const badge = svg('g', { class: 'ol-badge', transform: `translate(${n.width - 4} 4)`, 'aria-hidden': 'true' })
      badge.append(svg('circle', { r: 9 }), svg('text', { class: 'ol-badge-text', 'text-anchor': 'middle', y: 4.5 }, '!'))
      g.append(badge)
      // The message under the box, in the gap to the next row (whole in the tooltip).
      wrapLabel(messages.join('; '), 24, 2).forEach((line, i) => g.append(svg('text', { class: 'ol-problem-text', x: 0, y: n.height + 12 + 11 * i }, line)))
    }
    nodeLayer.append(g)
    nodeEls.set(n.id, g)
  }
  for (const row of rows.values()) row.sort((a, b) => a.x - b.x)
  for (const key of problems.keys()) edgeEls.get(key)?.classList.add('ol-problem')
  // Roving tab stop: one node is in the tab order (the first supply to start with); arrows move between nodes.
  let tabStop = layout.nodes.find((n) => n.isSupply)?.id ?? layout.nodes[0]?.id ?? null
  if (tabStop) nodeEls.get(tabStop)!.setAttribute('tabindex', '0')
  const moveTabStop = (id: string) => {
    if (id === tabStop) return
    if (tabStop) nodeEls.get(tabStop)?.setAttribute('tabindex', '-1')
    nodeEls.get(id)?.setAttribute('tabindex', '0')
    tabStop = id
  }

  // View state: a uniform scale and a translation, applied to the viewport group.
  const view = { scale: 1, tx: 0, ty: 0 }
  const apply = () => viewport.setAttribute('transform', `translate(${view.tx} ${view.ty}) scale(${view.scale})`)
  const size = () => {
    const box = canvas.getBoundingClientRect()
    return { width: box.width || 800, height: box.height || 500 }
  }
  const fitBox = (x0: number, y0: number, x1: number, y1: number, maxScale = 1.25) => {
    const { width, height } = size()
    const w = Math.max(1, x1 - x0 + 2 * MARGIN)
    const h = Math.max(1, y1 - y0 + 2 * MARGIN)
    view.scale = Math.min(maxScale, Math.max(MIN_SCALE, Math.min(width / w, height / h)))
    view.tx = (width - (x1 - x0) * view.scale) / 2 - x0 * view.scale
    view.ty = (height - (y1 - y0) * view.scale) / 2 - y0 * view.scale
    apply()
  }
  const fit = () => fitBox(-12, -30, Math.max(layout.width, 1) + 12, Math.max(layout.height, 1) + 12)
  const zoomAt = (factor: number, cx: number, cy: number) => {
    const next = Math.min(MAX_SCALE, Math.max(MIN_SCALE, view.scale * factor))
    const k = next / view.scale
    view.tx = cx - (cx - view.tx) * k
    view.ty = cy - (cy - view.ty) * k
    view.scale = next
    apply()
  }
  const zoomCentre = (factor: number) => {
    const { width, height } = size()
    zoomAt(factor, width / 2, height / 2)
  }
  const reveal = (ids: Iterable<string>) => {
    const boxes = [...ids].map((id) => placed.get(id)).filter((n): n is LayoutNode => n !== undefined)
    if (boxes.length === 0) return
    fitBox(
      Math.min(...boxes.map((n) => n.x)),
      Math.min(...boxes.map((n) => n.y)),
      Math.max(...boxes.map((n) => n.x + n.width)),
      Math.max(...boxes.map((n) => n.y + n.height)),
      1.25,
    )
  }
  /** Keeps a node in view when the keyboard moves to it (pans only, never zooms). */
  const ensureVisible = (n: LayoutNode) => {
    const { width, height } = size()
    const left = n.x * view.scale + view.tx
    const top = n.y * view.scale + view.ty
    const right = left + n.width * view.scale
    const bottom = top + n.height * view.scale
    if (left < 0) view.tx -= left - 20
    else if (right > width) view.tx -= right - width + 20
    if (top < 0) view.ty -= top - 20
    else if (bottom > height) view.ty -= bottom - height + 20
    apply()
  }

  // Pointer: drag pans, two pointers pinch-zoom, a tap on a node selects it.
  const pointers = new Map<number, { x: number; y: number }>()
  let dragged = 0
  let pinch: { distance: number } | null = null
  const local = (e: PointerEvent | WheelEvent) => {
    const box = canvas.getBoundingClientRect()
    return { x: e.clientX - box.left, y: e.clientY - box.top }
  }
  const onPointerDown = (e: PointerEvent) => {
    pointers.set(e.pointerId, local(e))
    dragged = 0
    if (pointers.size === 2) {
      const [a, b] = [...pointers.values()] as [{ x: number; y: number }, { x: number; y: number }]
      pinch = { distance: Math.hypot(a.x - b.x, a.y - b.y) }
    }
  }
  const onPointerMove = (e: PointerEvent) => {
    const before = pointers.get(e.pointerId)
    if (!before) return
    const now = local(e)
    pointers.set(e.pointerId, now)
    if (pointers.size === 2 && pinch) {
      const [a, b] = [...pointers.values()] as [{ x: number; y: number }, { x: number; y: number }]
      const distance = Math.hypot(a.x - b.x, a.y - b.y)
      if (pinch.distance > 0) zoomAt(distance / pinch.distance, (a.x + b.x) / 2, (a.y + b.y) / 2)
      pinch.distance = distance
      dragged += 10
      return
    }
    const dx = now.x - before.x
    const dy = now.y - before.y
    dragged += Math.abs(dx) + Math.abs(dy)
    if (dragged > 4) {
      if (!canvas.hasPointerCapture(e.pointerId)) canvas.setPointerCapture(e.pointerId)
      canvas.classList.add('panning')
      view.tx += dx
      view.ty += dy
      apply()
    }
  }
  const onPointerUp = (e: PointerEvent) => {
    pointers.delete(e.pointerId)
    if (pointers.size < 2) pinch = null
    canvas.classList.remove('panning')
  }
  const onClick = (e: MouseEvent) => {
    if (dragged > 4) return
    const g = (e.target as Element).closest<SVGGElement>('.ol-node')
    const id = g?.dataset.nodeId
    if (id) choose(id)
  }
  const onWheel = (e: WheelEvent) => {
    e.preventDefault()
    const p = local(e)
    zoomAt(Math.exp(-e.deltaY * (e.deltaMode === 1 ? 0.05 : 0.0015)), p.x, p.y)
  }
  const onKeyDown = (e: KeyboardEvent) => {
    const g = (e.target as Element).closest<SVGGElement>('.ol-node')
    const n = g?.dataset.nodeId ? placed.get(g.dataset.nodeId) : undefined
    if (!n) {
      if (e.key === '+' || e.key === '=') zoomCentre(1.25)
      else if (e.key === '-') zoomCentre(0.8)
      return
    }
    let target: LayoutNode | undefined
    if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault()
      choose(n.id)
      return
    }
    const row = rows.get(`${n.component}:${n.layer}`)!
    if (e.key === 'ArrowLeft') target = row[row.indexOf(n) - 1]
    else if (e.key === 'ArrowRight') target = row[row.indexOf(n) + 1]
    else if (e.key === 'ArrowUp' || e.key === 'ArrowDown') {
      const other = rows.get(`${n.component}:${n.layer + (e.key === 'ArrowUp' ? -1 : 1)}`)
      const centre = n.x + n.width / 2
      target = other?.reduce((best, m) => (Math.abs(m.x + m.width / 2 - centre) < Math.abs(best.x + best.width / 2 - centre) ? m : best))
    } else if (e.key === '+' || e.key === '=') zoomCentre(1.25)
    else if (e.key === '-') zoomCentre(0.8)
    if (target) {
      e.preventDefault()
      nodeEls.get(target.id)?.focus()
    }
  }
  const onFocusIn = (e: FocusEvent) => {
    const id = (e.target as Element).closest<SVGGElement>('.ol-node')?.dataset.nodeId
    const n = id ? placed.get(id) : undefined
    if (n) {
      moveTabStop(n.id)
      ensureVisible(n)
    }
  }
  canvas.addEventListener('pointerdown', onPointerDown)
  canvas.addEventListener('pointermove', onPointerMove)
  canvas.addEventListener('pointerup', onPointerUp)
  canvas.addEventListener('pointercancel', onPointerUp)
  canvas.addEventListener('click', onClick)
  canvas.addEventListener('wheel', onWheel, { passive: false })
  canvas.addEventListener('keydown', onKeyDown)
  canvas.addEventListener('focusin', onFocusIn)

  let selected: string | null = null
  const select = (id: string | null) => {
    if (selected) {
      nodeEls.get(selected)?.classList.remove('ol-selected')
      nodeEls.get(selected)?.setAttribute('aria-pressed', 'false')
    }
    selected = id && nodeEls.has(id) ? id : null
    if (selected) {
      moveTabStop(selected)
      nodeEls.get(selected)!.classList.add('ol-selected')
      nodeEls.get(selected)!.setAttribute('aria-pressed', 'true')
    }
  }
  const choose = (id: string) => {
    select(id)
    options.onSelect(id)
  }

  const highlighted = new Map<HighlightKind, Element[]>()
  const highlight = (kind: HighlightKind, nodeIds: Iterable<string>, edgeKeys: Iterable<string> = []) => {
    for (const el of highlighted.get(kind) ?? []) el.classList.remove(`ol-${kind}`, 'ol-closing')
    const marked: Element[] = []
    for (const id of nodeIds) {
      const el = nodeEls.get(id)
      if (el) {
        el.classList.add(`ol-${kind}`)
        marked.push(el)
      }
    }
    for (const key of edgeKeys) {
      const closing = key.startsWith('closing:')
      const el = edgeEls.get(closing ? key.slice(8) : key)
      if (el) {
        el.classList.add(`ol-${kind}`)
        if (closing) el.classList.add('ol-closing')
        marked.push(el)
      }
    }
    highlighted.set(kind, marked)
  }

  const annotate = (labels: ReadonlyMap<string, string>) => {
    annotationLayer.replaceChildren()
    for (const [id, text] of labels) {
      const n = placed.get(id)
      if (n) annotationLayer.append(svg('text', { class: 'ol-annotation', x: n.x, y: n.y + n.height + 13, 'data-node-id': id }, text))
    }
  }

  const zoomIn = button('Zoom in', '+', () => zoomCentre(1.25))
  const zoomOut = button('Zoom out', '−', () => zoomCentre(0.8))
  const fitButton = button('Fit the whole network in view', 'Fit', fit)
  const toolbar = document.createElement('div')
  toolbar.className = 'one-line-toolbar'
  toolbar.append(zoomIn, zoomOut, fitButton, legend())
  // Tall enough for the network at about natural size, within the window (CSSOM: allowed by the console's CSP).
  canvas.style.height = `${Math.round(Math.max(280, Math.min(layout.height + 2 * MARGIN + 30, 640)))}px`
  canvas.style.maxHeight = '75vh'
  const element = document.createElement('div')
  element.className = 'one-line'
  element.append(toolbar, canvas)
  // Fit once the canvas has a size (it is inserted into the page after this returns).
  const observer =
    typeof ResizeObserver === 'undefined'
      ? null
      : new ResizeObserver(() => {
          if (!fitted) {
            fitted = true
            fit()
          }
        })
  let fitted = false
  observer?.observe(canvas)
  apply()

  return {
    element,
    select,
    highlight,
    annotate,
    reveal,
    fit,
    destroy() {
      observer?.disconnect()
      element.remove()
    },
  }
}

function button(label: string, text: string, onClick: () => void): HTMLButtonElement {
  const b = document.createElement('button')
  b.type = 'button'
  b.textContent = text
  b.setAttribute('aria-label', label)
  b.title = label
  b.addEventListener('click', onClick)
  return b
}

function legend(): HTMLUListElement {
  const list = document.createElement('ul')
  list.className = 'one-line-legend'
  list.setAttribute('aria-label', 'Legend')
  const items: Array<[string, string]> = [
    ['ol-edge ol-edge-Cable', 'Cable'],
    ['ol-edge ol-edge-OverheadLine', 'Overhead line'],
    ['ol-edge ol-edge-BusbarLink', 'Busbar link'],
    ['ol-edge ol-edge-BusTie', 'Bus tie'],
    ['ol-edge ol-path', 'Supply path'],
    ['ol-edge ol-loop', 'Loop'],
    ['ol-edge ol-loop ol-closing', 'Loop-closing edge'],
  ]
  for (const [cls, text] of items) {
    const li = document.createElement('li')
    const sample = svg('svg', { viewBox: '0 0 28 14', 'aria-hidden': 'true' })
    sample.append(svg('path', { d: 'M2 7 L26 7', class: cls }))
    li.append(sample, text)
    list.append(li)
  }
  return list
}
