// The network editor's dialogs: add or edit a node, connect two nodes, delete a node or an edge, import a whole
// network file. Each sends what the engineer typed to the electrical API and shows the API's problems next to the
// fields their pointers name (dialog.ts, dom.ts field()); the values are read as typed (forms.ts), nothing is checked here.
import { EDGE_TYPES, NODE_TYPES } from '../../../src/modules/electrical/codes.ts'
import type { ElectricalEdge, ElectricalNode } from '../api-types.ts'
import { ApiProblem, type Api } from '../context.ts'
import { openDialog } from '../dialog.ts'
import { field, h, select } from '../dom.ts'
import { nullable, numeric, optional, typed } from '../forms.ts'

type NodeField = [name: keyof ElectricalNode & string, label: string, kind: 'text' | 'number', hint?: string]

const RATINGS: NodeField[] = [
  ['ratedVoltageV', 'Rated voltage (V)', 'number'],
  ['ratedCurrentA', 'Rated current (A)', 'number'],
  ['ratedPowerKw', 'Rated power (kW)', 'number', 'kVA for a transformer, kvar for a capacitor bank.'],
  ['impedanceOhms', 'Impedance (Ω)', 'number'],
  ['cableSize', 'Cable size', 'text', 'As on the drawing, e.g. 3C+E 185mm² Cu XLPE.'],
  ['cableLengthM', 'Cable length (m)', 'number', 'Of the cable feeding this node.'],
]
const PROTECTION: NodeField[] = [
  ['protectionCurve', 'Protection curve', 'text', 'IEC SI, IEC VI, IEC EI, IEC LTI, IEEE MI, IEEE VI, IEEE EI or DT; empty for none.'],
  ['protectionPickupA', 'Pickup Is (A)', 'number'],
  ['protectionTms', 'TMS / time dial', 'number', 'For DT, the delay in seconds.'],
]

const input = (name: string, value: string, extra: Record<string, string> = {}) => h('input', { name, value, autocomplete: 'off', ...extra })

/** Creates a node (`node` null) or edits one; resolves true once the API accepted it. */
export function nodeDialog(api: Api, base: string, node: ElectricalNode | null): Promise<boolean> {
  const value = (name: keyof ElectricalNode) => (node && node[name] !== null && node[name] !== undefined ? String(node[name]) : '')
  const control = ([name, label, kind, hint]: NodeField) =>
    field(label, input(name, value(name), kind === 'number' ? { inputmode: 'decimal' } : {}), { pointer: `/${name}`, hint })
  const fields: HTMLElement[] = [
    node ? null : field('Id', input('id', ''), { pointer: '/id', hint: 'Unique in the site, as on the drawing (e.g. MSB-1); it cannot be changed later.' }),
    field('Name', input('name', value('name')), { pointer: '/name' }),
    field(
      'Type',
      select(
        'nodeType',
        NODE_TYPES.map((t) => [String(t.code), t.label]),
        node ? String(node.nodeType) : '',
      ),
      { pointer: '/nodeType' },
    ),
    h('fieldset', {}, h('legend', {}, 'Ratings'), ...RATINGS.map(control)),
    h('fieldset', {}, h('legend', {}, 'Protection'), ...PROTECTION.map(control)),
    field('Description', h('textarea', { name: 'description', rows: 2 }, value('description')), { pointer: '/description' }),
  ].filter((f) => f !== null)
  return openDialog({
    title: node ? `Edit ${node.id}` : 'Add a node',
    fields,
    submitLabel: node ? 'Save' : 'Add node',
    async onSubmit(data) {
      const rest = [...RATINGS, ...PROTECTION, ['description', '', 'text'] as NodeField]
      if (node) {
        // An update sends every field: one emptied is null, which clears it (spec 2.5).
        const body: Record<string, unknown> = { name: nullable(data, 'name'), nodeType: numeric(data, 'nodeType') }
        for (const [name, , kind] of rest) body[name] = kind === 'number' ? (numeric(data, name) ?? null) : nullable(data, name)
        await api.send('PUT', `${base}/nodes/${encodeURIComponent(node.id)}`, body)
        return
      }
      // A new node leaves out what was left empty (spec 2.5: only id, name and type are required).
      const body: Record<string, unknown> = { id: typed(data, 'id'), name: optional(data, 'name'), nodeType: numeric(data, 'nodeType') }
      for (const [name, , kind] of rest) body[name] = kind === 'number' ? numeric(data, name) : optional(data, name)
      await api.send('POST', `${base}/nodes`, body)
    },
  })
}

/** Connects two nodes (the first preset to `from`); the API refuses unknown ends, self-loops and repeats. */
export function edgeDialog(api: Api, base: string, nodeIds: readonly string[], from?: string): Promise<boolean> {
  const ends = nodeIds.map((id): [string, string] => [id, id])
  return openDialog({
    title: 'Connect two nodes',
    fields: [
      field('From', select('sourceId', ends, from), { pointer: '/sourceId' }),
      field('To', select('targetId', ends), { pointer: '/targetId' }),
      field(
        'Connection type',
        select(
          'edgeType',
          EDGE_TYPES.map((t) => [String(t.code), t.label]),
        ),
        { pointer: '/edgeType' },
      ),
    ],
    submitLabel: 'Connect',
    async onSubmit(data) {
      await api.send('POST', `${base}/edges`, { sourceId: typed(data, 'sourceId'), targetId: typed(data, 'targetId'), edgeType: numeric(data, 'edgeType') })
    },
  })
}

/** Deletes a node; with its connections only when the engineer ticks it (the API refuses otherwise, 409). */
export function deleteNodeDialog(api: Api, base: string, node: ElectricalNode, edgeCount: number): Promise<boolean> {
  const cascade = h('input', { type: 'checkbox', name: 'cascade', value: 'true' })
  return openDialog({
    title: `Delete ${node.id}`,
    body: [h('p', {}, `${node.name ?? node.id} will be removed from the network. It has ${edgeCount} connection${edgeCount === 1 ? '' : 's'}.`)],
    fields: edgeCount > 0 ? [h('div', { class: 'field' }, h('label', {}, cascade, ' Also delete its connections'))] : [],
    submitLabel: 'Delete node',
    danger: true,
    async onSubmit(data) {
      await api.send('DELETE', `${base}/nodes/${encodeURIComponent(node.id)}${data.get('cascade') ? '?cascade=true' : ''}`)
    },
  })
}

export function deleteEdgeDialog(api: Api, base: string, edge: ElectricalEdge): Promise<boolean> {
  const query = new URLSearchParams({ source: edge.sourceId, target: edge.targetId, type: String(edge.edgeType) })
  return openDialog({
    title: 'Delete a connection',
    body: [h('p', {}, `${edge.sourceId} – ${edge.targetId} (${EDGE_TYPES[edge.edgeType]?.label ?? edge.edgeTypeName}) will be removed.`)],
    submitLabel: 'Delete connection',
    danger: true,
    async onSubmit() {
      await api.send('DELETE', `${base}/edges?${query}`)
    },
  })
}

/** A refused import whose problems name elements of the file: the file's text and the API's problem. */
export interface RefusedImport {
  text: string
  problem: ApiProblem
}

/**
 * Replaces the whole network with a picked file, sent as it is. A refusal naming nodes or edges of the file
 * (`/nodes/3/ratedCurrentA`) closes the dialog and resolves with it, for the page to mark them on the file's diagram;
 * any other refusal (not JSON, too large) stays in the dialog.
 */
export async function importDialog(api: Api, base: string): Promise<'imported' | 'cancelled' | RefusedImport> {
  let refused: RefusedImport | null = null
  const file = h('input', { type: 'file', name: 'file', accept: '.json,application/json' })
  const done = await openDialog({
    title: 'Import a network file',
    body: [h('p', {}, 'The file replaces the whole network of this site, all or nothing: a refused file changes nothing.')],
    fields: [field('Network file (JSON: { nodes, edges })', file, { pointer: '' })],
    submitLabel: 'Import and replace',
    danger: true,
    async onSubmit(data) {
      const picked = data.get('file')
      const text = picked instanceof Blob ? await picked.text() : ''
      try {
        await api.send('PUT', `${base}/network`, text, { type: 'application/json' })
      } catch (error) {
        if (error instanceof ApiProblem && error.errors.some((e) => /^\/(nodes|edges)\/\d+/.test(e.pointer))) {
          refused = { text, problem: error }
          return
        }
        throw error
      }
    },
  })
  if (refused) return refused
  return done ? 'imported' : 'cancelled'
}
