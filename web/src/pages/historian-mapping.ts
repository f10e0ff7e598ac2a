// The historian import's mapping editor (issue 28): the tags a dry run found in the export, each with a proposed
// instance and tag key that the engineer corrects, turned into the mapping_csv of the real import; and the rejected
// rows of an import grouped by reason. The API reads both files and judges every value: this module only proposes.
import type { Batch, Instance } from '../api-types.ts'
import { h, select, table } from '../dom.ts'

/** One tag of the export as the editor holds it. */
export interface MappingRow {
  historianTag: string
  /** Rows (long layouts) or values (wide) of the tag in the file. */
  count: number
  instanceId: string | null
  tagKey: string
  unit: string | null
  scale: number
  why: string
}

const SEPARATORS = /[./:\\\s]/

/** An id or a tag compared loosely: case and punctuation aside (`CV-101` is `cv101`). */
const loose = (text: string) => text.toLowerCase().replace(/[^a-z0-9]/g, '')

/**
 * The proposal for one historian tag, first rule that applies:
 * 1. an instance's tag mapping whose controller address is the tag (or ends it after a separator): that instance and key;
 * 2. an instance's tag mapping whose key is the tag: that instance and key;
 * 3. an instance whose id starts the tag, before a separator (`U204.FC103_OP.F_CV` → `U204`): that instance, the rest
 *    of the tag as the key (the instance's own key when one matches it loosely);
 * 4. otherwise no instance (the tag is not imported until one is chosen), the historian tag as the key.
 */
export function propose(historianTag: string, instances: readonly Instance[]): Pick<MappingRow, 'instanceId' | 'tagKey' | 'why'> {
  const tag = historianTag.trim()
  const lower = tag.toLowerCase()
  for (const i of instances)
    for (const [key, address] of Object.entries(i.tagMappings)) {
      const a = address.toLowerCase()
      if (lower === a || (lower.endsWith(a) && SEPARATORS.test(lower.charAt(lower.length - a.length - 1))))
        return { instanceId: i.id, tagKey: key, why: `controller address of ${i.id} · ${key}` }
    }
  for (const i of instances)
    for (const key of Object.keys(i.tagMappings)) if (key.toLowerCase() === lower) return { instanceId: i.id, tagKey: key, why: `tag key of ${i.id}` }
  const head = tag.split(SEPARATORS, 1)[0] ?? ''
  const rest = tag.slice(head.length + 1)
  if (head !== '' && rest !== '') {
    const owner = instances.find((i) => loose(i.id) === loose(head))
    if (owner) {
      const key = Object.keys(owner.tagMappings).find((k) => loose(k) === loose(rest)) ?? rest
      return { instanceId: owner.id, tagKey: key, why: `starts with the id of ${owner.id}` }
    }
  }
  return { instanceId: null, tagKey: tag, why: 'no match: choose an instance' }
}

/** The editor's rows from a dry run: tags the sent mapping already named, then the tags it did not, with proposals. */
export function rowsOf(dryRun: Batch, instances: readonly Instance[]): MappingRow[] {
  const known = new Set(instances.map((i) => i.id))
  return [
    ...dryRun.tags.map((t) => ({
      historianTag: t.historianTag,
      count: t.samples,
      instanceId: known.has(t.instanceId) ? t.instanceId : null,
      tagKey: t.tagKey,
      unit: t.unit,
      scale: t.scale,
      why: 'from your mapping file',
    })),
    ...dryRun.unmappedTags.map((t) => ({ historianTag: t.tag, count: t.rows, unit: null, scale: 1, ...propose(t.tag, instances) })),
  ]
}

const csvCell = (text: string) => (/[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text)

/** The mapping_csv of the rows that have an instance (the others stay out: their rows are rejected as unmapped). */
export function mappingCsv(rows: readonly MappingRow[]): string {
  const lines = ['historian_tag,instance_id,tag_key,unit,scale']
  for (const r of rows) if (r.instanceId) lines.push([r.historianTag, r.instanceId, r.tagKey, r.unit ?? '', String(r.scale)].map(csvCell).join(','))
  return `${lines.join('\r\n')}\r\n`
}

export interface MappingEditor {
  element: HTMLElement
  /** The rows as the engineer left them. */
  rows(): MappingRow[]
}

/** The editor: one line per tag (instance, tag key, unit), and a way to give every tag without an instance the same one. */
export function mappingEditor(rows: MappingRow[], instances: readonly Instance[], options: { listedAll: boolean }): MappingEditor {
  const choices: Array<[string, string]> = [['', '— not imported —'], ...instances.map((i): [string, string] => [i.id, `${i.id} (${i.name})`])]
  const controls = rows.map((r) => {
    const instance = select('instance_id', choices, r.instanceId ?? '')
    instance.setAttribute('aria-label', `Instance for ${r.historianTag}`)
    const tagKey = h('input', { name: 'tag_key', value: r.tagKey, autocomplete: 'off', spellcheck: 'false', 'aria-label': `Tag key for ${r.historianTag}` })
    const unit = h('input', { name: 'unit', value: r.unit ?? '', autocomplete: 'off', size: 6, 'aria-label': `Unit for ${r.historianTag}` })
    return { row: r, instance, tagKey, unit }
  })
  const proposed = rows.filter((r) => r.instanceId !== null).length
  const bulk = select('bulk_instance', choices.slice(1))
  bulk.setAttribute('aria-label', 'Instance for every tag without one')
  const bulkApply = h(
    'button',
    {
      type: 'button',
      class: 'secondary',
      onclick: () => {
        for (const c of controls) if (c.instance.value === '') c.instance.value = bulk.value
      },
    },
    'Give every tag without an instance this one',
  )
  const element = h(
    'div',
    { class: 'mapping-editor' },
    h(
      'p',
      { class: 'hint' },
      `${rows.length} tag${rows.length === 1 ? '' : 's'} found${options.listedAll ? '' : ' (the first 1 000 the dry run lists)'}; ${proposed} with a proposed instance. ` +
        "How a tag is proposed: an instance's tag mapping whose controller address is the historian tag, else one whose tag key is the tag, " +
        'else the instance whose id starts the tag (the rest of the tag as the key); otherwise no instance and the tag itself as the key. ' +
        'A tag left without an instance is not imported: its rows are rejected as not in the mapping. A tag whose every value is empty ' +
        'or a "no value" one has nothing to import and is not listed.',
    ),
    instances.length > 0
      ? h('div', { class: 'filters mapping-bulk' }, bulk, bulkApply)
      : h('p', { class: 'notice' }, 'This site has no instances yet: create them first.'),
    table(
      'Tags found and where they go',
      ['Historian tag', 'Rows', 'Instance', 'Tag key', 'Unit', 'Proposed because'],
      controls.map((c) => ({
        attrs: { 'data-historian-tag': c.row.historianTag },
        cells: [h('code', {}, c.row.historianTag), String(c.row.count), c.instance, c.tagKey, c.unit, h('span', { class: 'hint' }, c.row.why)],
      })),
      { empty: 'The dry run found no tags in this file.' },
    ),
  )
  return {
    element,
    rows: () =>
      controls.map((c) => ({
        ...c.row,
        instanceId: c.instance.value || null,
        tagKey: c.tagKey.value.trim(),
        unit: c.unit.value.trim() || null,
      })),
  }
}

/** A reason with its particulars (quoted tag names, values) left out, so that rows refused for one cause count together. */
export const reasonKind = (reason: string) => reason.replace(/'[^']*'/g, '…').replace(/-?\d+(\.\d+)?/g, 'n')

/** An import's rejections: counts per reason, then the rows. */
export function rejectionsByReason(batch: Batch): HTMLElement {
  const listed = batch.rejections.first
  const counts = new Map<string, { count: number; example: string }>()
  for (const r of listed) {
    const kind = reasonKind(r.reason)
    const had = counts.get(kind)
    counts.set(kind, { count: (had?.count ?? 0) + 1, example: had?.example ?? r.reason })
  }
  const byCount = [...counts.values()].sort((a, b) => b.count - a.count)
  return h(
    'div',
    { class: 'rejections-by-reason' },
    h(
      'p',
      {},
      `${batch.rejections.count} rejected value${batch.rejections.count === 1 ? '' : 's'}`,
      batch.rejections.count > listed.length ? `; the first ${listed.length} are counted by reason below.` : '.',
    ),
    table(
      'Rejections by reason',
      ['Reason (for example)', 'Rejected'],
      byCount.map((c) => ({ attrs: { 'data-reason-count': c.count }, cells: [c.example, String(c.count)] })),
      { empty: 'No rejected rows.' },
    ),
    listed.length > 0
      ? h(
          'details',
          {},
          h('summary', {}, `The ${listed.length} rejected row${listed.length === 1 ? '' : 's'} listed`),
          table(
            'Rejected rows',
            ['Line', 'Column', 'Reason'],
            listed.map((r) => [String(r.line), r.column ?? '—', r.reason]),
          ),
        )
      : null,
  )
}
