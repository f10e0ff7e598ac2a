// A refused network import drawn from the file itself: the elements the API refused never reached the site, so the
// file's own network is laid out and each node or edge an `errors[].pointer` names (`/nodes/3/ratedCurrentA`,
// `/edges/2`) is marked on it, beside the list of problems (each with a Show button).
import { append, h } from '../dom.ts'
import { createDiagram, edgeKey, type Diagram } from './diagram.ts'
import type { RefusedImport } from './editor.ts'
import { layoutNetwork } from './layout.ts'

/** A refused import: the file's own network drawn with each node or edge a problem names marked, and the list. */
export function drawRefusedImport(box: HTMLElement, { text, problem }: RefusedImport, back: () => void): Diagram | null {
  const file = parsed(text)
  const nodes = (Array.isArray(file.nodes) ? file.nodes : []).map((n: Record<string, unknown>, i: number) => ({
    id: typeof n?.id === 'string' && n.id !== '' ? n.id : `(node ${i})`,
    name: typeof n?.name === 'string' ? n.name : null,
    nodeType: Number.isInteger(n?.nodeType) ? (n.nodeType as number) : -1,
  }))
  const edges = (Array.isArray(file.edges) ? file.edges : []).map((e: Record<string, unknown>) => ({
    sourceId: String(e?.sourceId ?? ''),
    targetId: String(e?.targetId ?? ''),
    edgeType: Number.isInteger(e?.edgeType) ? (e.edgeType as number) : -1,
  }))
  const known = new Set(nodes.map((n) => n.id))
  const problems = new Map<string, string[]>()
  const note = (key: string, message: string) => problems.set(key, [...(problems.get(key) ?? []), message])
  const items = problem.errors.map((e) => {
    const [, kind, index, rest] = /^\/(nodes|edges)\/(\d+)(\/.*)?$/.exec(e.pointer) ?? []
    const message = `${rest ? `${rest.slice(1)}: ` : ''}${e.message}`
    let target: string | null = null
    if (kind === 'nodes') target = nodes[Number(index)]?.id ?? null
    else if (kind === 'edges') {
      const edge = edges[Number(index)]
      if (edge && known.has(edge.sourceId) && known.has(edge.targetId) && edge.sourceId !== edge.targetId) note(edgeKey(edge), message)
      // An end that names no node is marked on the other end, which is drawn.
      target = edge ? (known.has(edge.sourceId) && rest !== '/sourceId' ? edge.sourceId : known.has(edge.targetId) ? edge.targetId : null) : null
    }
    if (target) note(target, message)
    return { pointer: e.pointer, message, target }
  })
  const diagram =
    nodes.length > 0
      ? createDiagram(layoutNetwork(nodes, edges), new Map(nodes.map((n) => [n.id, n])), {
          label: `The refused file's network: ${nodes.length} nodes, ${edges.length} edges; nodes and edges with problems are marked.`,
          problems,
          onSelect: () => undefined,
        })
      : null
  append(
    box,
    h('div', { class: 'import-refused', role: 'alert' }, h('h3', {}, 'Import refused: nothing was changed'), h('p', {}, problem.detail ?? problem.message)),
    h(
      'ol',
      { class: 'import-problems', 'aria-label': 'Problems in the file' },
      ...items.map((item) =>
        h(
          'li',
          { 'data-pointer': item.pointer },
          h('span', { class: 'mono' }, item.pointer),
          item.target ? ` (${item.target})` : '',
          `: ${item.message} `,
          item.target && diagram
            ? h(
                'button',
                {
                  type: 'button',
                  class: 'secondary small',
                  'aria-label': `Show ${item.target} on the diagram`,
                  onclick: () => {
                    diagram.highlight('focus', [item.target!])
                    diagram.reveal([item.target!])
                  },
                },
                'Show',
              )
            : null,
        ),
      ),
    ),
    diagram?.element ?? null,
    h('p', {}, h('button', { type: 'button', class: 'secondary', onclick: back }, "Back to the site's network")),
  )
  diagram?.fit()
  return diagram
}

function parsed(text: string): { nodes?: unknown; edges?: unknown } {
  try {
    const value: unknown = JSON.parse(text)
    return value !== null && typeof value === 'object' ? value : {}
  } catch {
    return {}
  }
}
