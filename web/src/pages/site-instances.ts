// The site page's instances: the table (paged) and, for admins, create, edit, delete, and the bulk CSV upload whose
// dry-run report (POST …/instances/bulk?dryRun=true) is shown line by line before "Apply" sends the same file for real.
import type { Controller, Instance, InstanceBulkReport } from '../api-types.ts'
import { ApiProblem, type PageContext } from '../context.ts'
import { openDialog } from '../dialog.ts'
import { field, h, messageOf, select, table, type Child } from '../dom.ts'
import { json, nullable, optional, typed } from '../forms.ts'
import { fillLastChanges, lastChangeSlot } from '../last-change.ts'
import { pager, type PageOf, type Pager } from '../paging.ts'
import { isAdmin, sitePath } from './site-parts.ts'

/** The instances section of the site page; `names` gives a controller's label by id. */
export function instancesSection(box: HTMLElement, ctx: PageContext, code: string, names: Map<string, string>): Pager {
  const admin = isAdmin(ctx)
  const instances = pager<Instance>(
    box,
    'Instances',
    (cursor) => ctx.api.get<PageOf<Instance>>(`${sitePath(code)}/instances`, { limit: 50, cursor }),
    (items) => {
      const el = table(
        'Instances',
        ['Id', 'Name', 'Type', 'Asset number', 'Controller', 'Area', 'Mapped tags', 'Last change', ...(admin ? ['Actions'] : [])],
        items.map((i) => ({
          attrs: { 'data-instance-id': i.id },
          cells: [
            h('span', { class: 'mono' }, i.id),
            i.name,
            `${i.typeId}${i.typeVersion ? ` ${i.typeVersion}` : ''}`,
            i.assetNumber,
            names.get(i.controllerId) ?? h('span', { class: 'mono' }, i.controllerId),
            i.area ?? '—',
            String(Object.keys(i.tagMappings).length),
            lastChangeSlot([code, i.id]),
            admin
              ? h(
                  'span',
                  { class: 'row-actions' },
                  h(
                    'button',
                    {
                      type: 'button',
                      class: 'secondary small',
                      'aria-label': `Edit instance ${i.id}`,
                      onclick: () => {
                        void editInstance(ctx, code, i, refresh)
                      },
                    },
                    'Edit',
                  ),
                  h(
                    'button',
                    {
                      type: 'button',
                      class: 'danger small',
                      'aria-label': `Delete instance ${i.id}`,
                      onclick: () => {
                        void deleteInstance(ctx, code, i, refresh)
                      },
                    },
                    'Delete',
                  ),
                )
              : null,
          ],
        })),
        { empty: 'No instances in this site.' },
      )
      void fillLastChanges(ctx, el, 'instances')
      return el
    },
  )
  function refresh(): void {
    void instances.reload()
  }
  if (admin) {
    box.querySelector('h2')?.after(
      h(
        'p',
        { class: 'row-actions' },
        h(
          'button',
          {
            type: 'button',
            class: 'primary',
            onclick: () => {
              void editInstance(ctx, code, null, refresh)
            },
          },
          'New instance',
        ),
        h(
          'button',
          {
            type: 'button',
            class: 'secondary',
            onclick: () => {
              void bulkUpload(ctx, code, refresh)
            },
          },
          'Upload CSV',
        ),
      ),
    )
  }
  return instances
}

const pretty = (value: Record<string, unknown> | undefined) => (value && Object.keys(value).length > 0 ? JSON.stringify(value, null, 2) : '')

/** The create (`i` null) or edit form; tag mappings and config are JSON objects, sent as typed when they do not parse. */
async function editInstance(ctx: PageContext, code: string, i: Instance | null, refresh: () => void): Promise<void> {
  let controllers: Controller[]
  try {
    controllers = (await ctx.api.get<PageOf<Controller>>(`${sitePath(code)}/controllers`, { limit: 500 })).items
  } catch (error) {
    ctx.notify(messageOf(error), 'error')
    return
  }
  const text = (name: string, value: string | null | undefined, extra: Record<string, string | boolean> = {}) =>
    h('input', { type: 'text', name, value: value ?? '', autocomplete: 'off', spellcheck: 'false', ...extra })
  const area = (name: string, value: string) => {
    const el = h('textarea', { name, rows: 3, spellcheck: 'false', class: 'mono' })
    el.value = value
    return el
  }
  const controllerSelect = select(
    'controllerId',
    [['', 'Choose a controller'], ...controllers.map((c): [string, string] => [c.id, `${c.name ?? c.assetNumber} (${c.assetNumber})`])],
    i?.controllerId ?? '',
  )
  const fields = [
    i ? null : field('Id', text('id', '', { required: true }), { pointer: '/id', hint: 'Letters, digits, . _ : -; unique in the site, fixed once created.' }),
    field('Name', text('name', i?.name, { required: true }), { pointer: '/name' }),
    field('Type', text('typeId', i?.typeId, { required: true }), { pointer: '/typeId', hint: 'The equipment type, e.g. conveyor.' }),
    field('Type version', text('typeVersion', i?.typeVersion), { pointer: '/typeVersion' }),
    field('Asset number', text('assetNumber', i?.assetNumber, { required: true }), { pointer: '/assetNumber' }),
    field('Controller', controllerSelect, { pointer: '/controllerId' }),
    field('Area', text('area', i?.area), { pointer: '/area' }),
    field('Tag mappings (JSON)', area('tagMappings', pretty(i?.tagMappings)), {
      pointer: '/tagMappings',
      hint: 'Tag name to controller address, e.g. {"running": "Program:Main.CV101.Run"}; they count toward the poll budget.',
    }),
    field('Config (JSON)', area('config', pretty(i?.config)), { pointer: '/config' }),
  ].filter((el): el is HTMLDivElement => el !== null)

  const done = await openDialog({
    title: i ? `Edit instance ${i.id}` : 'New instance',
    fields,
    submitLabel: i ? 'Save instance' : 'Create instance',
    onSubmit: async (data) => {
      const common = {
        name: typed(data, 'name'),
        typeId: typed(data, 'typeId'),
        assetNumber: typed(data, 'assetNumber'),
        controllerId: typed(data, 'controllerId'),
      }
      if (i) {
        // Emptied JSON fields clear them ({}), as an emptied text field clears its value (null).
        await ctx.api.send('PUT', `${sitePath(code)}/instances/${encodeURIComponent(i.id)}`, {
          ...common,
          typeVersion: nullable(data, 'typeVersion'),
          area: nullable(data, 'area'),
          tagMappings: json(data, 'tagMappings') ?? {},
          config: json(data, 'config') ?? {},
        })
      } else {
        await ctx.api.send('POST', `${sitePath(code)}/instances`, {
          id: typed(data, 'id'),
          ...common,
          typeVersion: optional(data, 'typeVersion'),
          area: optional(data, 'area'),
          tagMappings: json(data, 'tagMappings'),
          config: json(data, 'config'),
        })
      }
    },
  })
  if (!done) return
  ctx.notify(i ? `Instance ${i.id} saved.` : 'Instance created.')
  refresh()
}

async function deleteInstance(ctx: PageContext, code: string, i: Instance, refresh: () => void): Promise<void> {
  const done = await openDialog({
    title: `Delete instance ${i.id}?`,
    body: [h('p', {}, `${i.name} and its tag mappings go; its alarms and historian data stay in their logs.`)],
    submitLabel: 'Delete instance',
    danger: true,
    onSubmit: async () => {
      await ctx.api.send('DELETE', `${sitePath(code)}/instances/${encodeURIComponent(i.id)}`)
    },
  })
  if (!done) return
  ctx.notify(`Instance ${i.id} deleted.`)
  refresh()
}

/** The dry run's report: the counts, then one row per line with what would happen and why a line is refused. */
function reportTable(report: InstanceBulkReport): Child[] {
  return [
    h(
      'p',
      { class: 'bulk-counts' },
      `Dry run: ${report.created} to create, ${report.updated} to replace, ${report.unchanged} unchanged, ${report.refused} refused.`,
    ),
    table(
      'What the upload would do, line by line',
      ['Line', 'Id', 'Outcome', 'Problems'],
      report.lines.map((l) => ({
        attrs: { 'data-line': l.line, 'data-outcome': l.outcome },
        cells: [
          String(l.line),
          l.id ?? '—',
          l.outcome,
          l.errors && l.errors.length > 0 ? h('ul', {}, ...l.errors.map((e) => h('li', {}, `${e.pointer || 'line'}: ${e.message}`))) : '—',
        ],
      })),
      { empty: 'The file has no lines.' },
    ),
    report.refused > 0 ? h('p', { class: 'warn-text' }, 'Fix the refused lines and choose the file again: Apply writes all lines or none.') : null,
  ]
}

/** The bulk CSV upload: choosing a file runs the API's dry run and shows its report; Apply sends the same file for real. */
async function bulkUpload(ctx: PageContext, code: string, refresh: () => void): Promise<void> {
  const file = h('input', { type: 'file', name: 'csv', accept: '.csv,text/csv' })
  const path = `${sitePath(code)}/instances/bulk`
  const csvOf = async (data: FormData) => {
    const chosen = data.get('csv')
    return chosen instanceof File && chosen.name !== '' ? chosen.text() : null
  }
  let applied: InstanceBulkReport | undefined
  const done = await openDialog({
    title: 'Upload instances (CSV)',
    body: [
      h(
        'p',
        {},
        'Columns id, name, typeId, assetNumber, controllerId; optional typeVersion, area, config and tagMappings (JSON), and a tag:NAME column per mapping. ',
        'A line whose id exists replaces that instance.',
      ),
    ],
    fields: [field('CSV file', file, { pointer: '/csv' })],
    submitLabel: 'Apply',
    preview: async (data) => {
      const csv = await csvOf(data)
      if (csv === null) return [h('p', { class: 'hint' }, 'Choose a file: the dry run shows what it would do before anything is written.')]
      try {
        return reportTable(await ctx.api.send<InstanceBulkReport>('POST', `${path}?dryRun=true`, csv, { type: 'text/csv' }))
      } catch (error) {
        // A file refused as a whole (not CSV, too many lines): the API's words, with each problem it names.
        const items = error instanceof ApiProblem ? error.errors.map((e) => h('li', {}, `${e.pointer || 'file'}: ${e.message}`)) : []
        return [h('div', { class: 'form-error', role: 'alert' }, h('p', {}, messageOf(error)), items.length > 0 ? h('ul', {}, ...items) : null)]
      }
    },
    onSubmit: async (data) => {
      const csv = await csvOf(data)
      // No file: the API answers what an empty upload is.
      applied = await ctx.api.send<InstanceBulkReport>('POST', path, csv ?? '', { type: 'text/csv' })
    },
  })
  if (!done || !applied) return
  ctx.notify(`Upload applied: ${applied.created} created, ${applied.updated} replaced, ${applied.unchanged} unchanged.`)
  refresh()
}
