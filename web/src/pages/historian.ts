// Historian page (/historian, optionally ?site=CODE): import an export (a dry run lists its tags, the mapping editor of
// historian-mapping.ts proposes where each goes, then the import, with progress), the site's import batches
// and their status (refreshed while one runs), a batch's rejected rows, and a trend chart of imported tags over a
// chosen period (zoomable; the server downsamples). Times are in the site's zone unless the engineer switches to the
// browser's (time-zone.ts); the trend's From and To are read in that zone too.
import { adoptStyles } from '../adopt-styles.ts'
import type { Batch, BatchSummary, Instance, RejectionReport, Site as SiteSummary } from '../api-types.ts'
import { ApiProblem, type Page, type PageContext } from '../context.ts'
import { createTrendChart, type TrendChart, type TrendSeries } from '../charts/trend.ts'
import { append, clear, clearProblems, field, h, messageOf, select, showProblem, table, time } from '../dom.ts'
import { pager, type PageOf } from '../paging.ts'
import { fromWallClock, shownZone, wallClock, zoneToggle } from '../time-zone.ts'
import { type MappingEditor, mappingCsv, mappingEditor, rejectionsByReason, rowsOf } from './historian-mapping.ts'

const FORMATS: Array<[string, string]> = [
  ['auto', 'Detect automatically'],
  ['long', 'Long (timestamp, tag, value)'],
  ['wide', 'Wide (a column per tag)'],
  ['ignition-tall', 'Ignition tall'],
  ['aveva-history', 'AVEVA / Wonderware History'],
  ['proficy', 'GE Proficy'],
  ['citect-pa', 'Citect / Plant SCADA'],
  ['piconfig', 'PI piconfig'],
]

const CSS = `
.historian-page section{margin:1.5rem 0}
.upload-progress[hidden]{display:none}
.upload-progress{display:flex;align-items:center;gap:.75rem;flex-wrap:wrap}
.upload-progress progress{width:min(24rem,100%);height:1.25rem}
.tag-picker{display:flex;flex-wrap:wrap;gap:.25rem 1.25rem;border:1px solid #c6ccd4;border-radius:6px;padding:.5rem .75rem;margin:0}
.status-complete{color:#1e7a3a;font-weight:600}.status-failed{color:#b3261e;font-weight:600}.status-running{color:#b35c00;font-weight:600}
`

const isAdmin = (ctx: PageContext) => ctx.principal.role === 'owner' || ctx.principal.role === 'admin'

/** The end of a period that includes a sample at `lastMs` (periods are [from, to)): the next whole second. */
/** A batch the series reads take: complete, or a gateway's open live batch of the current window (still growing). */
const isReadable = (b: BatchSummary) => b.status === 'complete' || b.status === 'open'
const after = (lastMs: number) => Math.floor(lastMs / 1000) * 1000 + 1000

export const page: Page = async (root, ctx) => {
  adoptStyles('historian-page', CSS)
  root.classList.add('historian-page')
  root.append(h('h1', {}, 'Historian'))
  let sites: SiteSummary[]
  try {
    sites = (await ctx.api.get<PageOf<SiteSummary>>('/api/sites', { limit: 500 })).items
  } catch (error) {
    root.append(h('p', { class: 'form-error', role: 'alert' }, messageOf(error)))
    return
  }
  if (sites.length === 0) {
    root.append(h('p', { class: 'empty' }, 'No sites yet: historian data belongs to a site.'))
    return
  }
  const wanted = ctx.query.get('site')
  const siteSelect = select(
    'site_id',
    sites.map((s) => [s.code, `${s.name} (${s.code})`]),
    sites.some((s) => s.code === wanted) ? (wanted ?? undefined) : sites[0]!.code,
  )
  const siteForm = h('form', { class: 'filters', 'aria-label': 'Site' }, field('Site', siteSelect))
  siteForm.addEventListener('submit', (e) => e.preventDefault())
  root.append(siteForm)
  const site = () => siteSelect.value
  const siteZone = () => sites.find((s) => s.code === site())?.timeZone ?? 'UTC'
  let zone = shownZone(siteZone())

  const uploadBox = h('section', { 'aria-labelledby': 'hist-upload' }, h('h2', { id: 'hist-upload' }, 'Import an export'))
  const batchesBox = h('section', { 'aria-labelledby': 'hist-batches' }, h('h2', { id: 'hist-batches' }, 'Import batches'))
  const rejectionsBox = h('section', { 'aria-labelledby': 'hist-rejections', hidden: true }, h('h2', { id: 'hist-rejections' }, 'Rejected rows'))
  const rejectionsBody = h('div', { 'aria-live': 'polite' })
  rejectionsBox.append(rejectionsBody)
  const trendBox = h('section', { 'aria-labelledby': 'hist-trend' }, h('h2', { id: 'hist-trend' }, 'Trend'))
  root.append(uploadBox, batchesBox, rejectionsBox, trendBox)

  // Batches, refreshed every 2 s while one of the shown batches is running.
  let shown: BatchSummary[] = []
  let pollTimer: ReturnType<typeof setTimeout> | undefined
  let stopped = false
  const batches = pager<BatchSummary>(
    batchesBox,
    'Import batches',
    (cursor) => ctx.api.get<PageOf<BatchSummary>>('/api/historian/import-batches', { siteId: site(), limit: 20, cursor }),
    (items) => {
      shown = items
      clearTimeout(pollTimer)
      if (!stopped && items.some((b) => b.status === 'running'))
        pollTimer = setTimeout(() => {
          void batches.reload()
        }, 2000)
      return batchTable(items)
    },
  )

  // Whole batches (their tags), read once each: a complete batch does not change.
  const wholeBatches = new Map<string, Promise<Batch>>()
  function wholeBatch(id: string): Promise<Batch> {
    let batch = wholeBatches.get(id)
    if (batch === undefined) {
      batch = ctx.api.get<Batch>(`/api/historian/import-batches/${encodeURIComponent(id)}`)
      wholeBatches.set(id, batch)
      batch.catch(() => wholeBatches.delete(id))
    }
    return batch
  }

  function batchTable(items: BatchSummary[]): HTMLElement {
    return table(
      'Import batches',
      ['Imported', 'File', 'Format', 'Status', 'Rows read', 'Samples stored', 'Rejected', 'Collisions / replaced', 'Period', 'Actions'],
      items.map((b) => ({
        attrs: { 'data-batch-id': b.id ?? '', 'data-status': b.status },
        cells: [
          time(b.createdAt, zone),
          h('span', { class: 'file-name' }, b.trendFileName ?? '—'),
          b.format,
          h(
            'span',
            { class: `status-${b.status}` },
            b.status,
            b.status === 'running' && b.progress.bytesTotal ? ` ${Math.round((100 * b.progress.bytesRead) / b.progress.bytesTotal)} %` : '',
            b.isForced ? ' (forced)' : '',
            b.error ? h('span', { class: 'hint' }, h('br'), b.error) : null,
          ),
          String(b.rowsRead),
          String(b.samplesStored),
          String(b.rowsRejected),
          `${b.collisions} / ${b.replaced}`,
          b.timeRange ? h('span', {}, time(b.timeRange.from, zone), ' – ', time(b.timeRange.to, zone)) : '—',
          h(
            'span',
            { class: 'row-actions' },
            b.id && b.rowsRejected > 0
              ? h(
                  'button',
                  {
                    type: 'button',
                    class: 'secondary small',
                    'aria-label': `Rejected rows of ${b.trendFileName ?? b.id}`,
                    onclick: () => {
                      void showRejections(b)
                    },
                  },
                  'Rejected rows',
                )
              : null,
            b.id && isReadable(b) && b.tagCount > 0
              ? h(
                  'button',
                  {
                    type: 'button',
                    class: 'secondary small',
                    'aria-label': `Trend the tags of ${b.trendFileName ?? b.id}`,
                    onclick: () => {
                      void trendOf(b.id!)
                    },
                  },
                  'Trend',
                )
              : null,
          ),
        ],
      })),
      { empty: 'No imports for this site yet.' },
    )
  }

  async function showRejections(b: BatchSummary): Promise<void> {
    rejectionsBox.hidden = false
    clear(rejectionsBody)
    rejectionsBody.append(h('p', { class: 'hint' }, 'Loading…'))
    try {
      const report = await ctx.api.get<RejectionReport>(`/api/historian/import-batches/${encodeURIComponent(b.id ?? '')}/rejections`)
      clear(rejectionsBody)
      const csv = [
        'line,column,reason',
        ...report.rejections.map((r) =>
          [r.line, r.column ?? '', r.reason].map((c) => (/[",\r\n]/.test(String(c)) ? `"${String(c).replaceAll('"', '""')}"` : String(c))).join(','),
        ),
      ].join('\r\n')
      const download = h(
        'a',
        { href: URL.createObjectURL(new Blob([`${csv}\r\n`], { type: 'text/csv' })), download: `${report.batchId}-rejections.csv`, class: 'button secondary' },
        'Download as CSV',
      )
      append(
        rejectionsBody,
        h(
          'p',
          {},
          `${b.trendFileName ?? report.batchId}: ${report.count} rejection${report.count === 1 ? '' : 's'}`,
          report.count > report.rejections.length ? ` (the first ${report.rejections.length} are listed)` : '',
          '. ',
          download,
        ),
        table(
          'Rejected rows',
          ['Line', 'Column', 'Reason'],
          report.rejections.map((r) => [String(r.line), r.column ?? '—', r.reason]),
          { empty: 'No rejected rows.' },
        ),
        report.unmappedTags.length > 0
          ? h('p', {}, 'Tags not in the mapping: ', report.unmappedTags.map((t) => `${t.tag} (${t.rows} row${t.rows === 1 ? '' : 's'})`).join(', '))
          : null,
      )
      rejectionsBox.scrollIntoView({ block: 'nearest' })
    } catch (error) {
      clear(rejectionsBody)
      rejectionsBody.append(h('p', { class: 'form-error', role: 'alert' }, messageOf(error)))
    }
  }

  // Upload (admins and owners; members see why not): the export is read once as a dry run (nothing stored) to list
  // its tags, the mapping editor proposes where each goes, and the import sends the mapping the engineer settled on.
  if (isAdmin(ctx)) {
    const format = select('format', FORMATS, 'auto')
    const trend = h('input', { type: 'file', name: 'trend_csv', accept: '.csv,.txt,text/csv', required: true })
    const mapping = h('input', { type: 'file', name: 'mapping_csv', accept: '.csv,text/csv' })
    const timezone = h('input', { name: 'timezone', placeholder: "the site's", autocomplete: 'off' })
    const sentinels = h('input', { name: 'sentinels', autocomplete: 'off', spellcheck: 'false' })
    const force = h('input', { type: 'checkbox', name: 'force', id: 'hist-force' })
    const read = h('button', { type: 'submit', class: 'primary' }, 'Read the tags')
    const submit = h('button', { type: 'button', class: 'primary', disabled: true }, 'Import')
    const progress = h('progress', { max: 1, value: 0, 'aria-label': 'Upload progress' })
    const progressText = h('span', { role: 'status' })
    const progressRow = h('div', { class: 'upload-progress', hidden: true }, progress, progressText)
    const editorBox = h('section', { 'aria-labelledby': 'hist-mapping', hidden: true }, h('h3', { id: 'hist-mapping' }, 'Where each tag goes'))
    const editorBody = h('div', { 'aria-live': 'polite' })
    const outcome = h('div', { 'aria-live': 'polite' })
    const form = h(
      'form',
      { class: 'form', 'aria-labelledby': 'hist-upload', novalidate: true },
      field('Trend export (CSV)', trend, { pointer: '/trend_csv' }),
      field('Layout', format, { pointer: '/format' }),
      field('Time zone of local timestamps (optional)', timezone, { pointer: '/timezone', hint: "IANA name such as Australia/Sydney; default the site's." }),
      field('Values meaning "no value" (optional)', sentinels, { pointer: '/sentinels', hint: 'Comma-separated, such as -9999,888.8.' }),
      field('Start from a mapping file (optional)', mapping, {
        pointer: '/mapping_csv',
        hint: 'historian_tag,instance_id,tag_key[,unit][,scale]; the tags it does not name get proposals.',
      }),
      h('div', { class: 'actions' }, read),
      progressRow,
    )
    editorBox.append(
      editorBody,
      h(
        'span',
        { class: 'check' },
        force,
        h('label', { for: 'hist-force' }, 'Import even if these two files were imported before (force: newer values replace stored ones)'),
      ),
      h('div', { class: 'actions' }, submit),
    )
    uploadBox.append(form, editorBox, outcome)
    let editor: MappingEditor | null = null
    // Another file, layout, zone, site…: the tags read no longer hold; read them again before importing.
    const stale = () => {
      editor = null
      editorBox.hidden = true
      submit.disabled = true
    }
    form.addEventListener('change', stale)
    siteSelect.addEventListener('change', stale)

    /** The upload's text parts and the trend file last (the server then streams it straight into the database). */
    const formData = (mappingFile: Blob, mappingName: string, extra: Record<string, string>) => {
      const data = new FormData()
      data.append('site_id', site())
      data.append('format', format.value)
      if (timezone.value.trim()) data.append('timezone', timezone.value.trim())
      if (sentinels.value.trim()) data.append('sentinels', sentinels.value.trim())
      for (const [name, value] of Object.entries(extra)) data.append(name, value)
      data.append('mapping_csv', mappingFile, mappingName)
      const trendFile = trend.files![0]!
      data.append('trend_csv', trendFile, trendFile.name)
      return data
    }
    const upload = (data: FormData) => {
      progressRow.hidden = false
      progress.value = 0
      progressText.textContent = 'Uploading… 0 %'
      return ctx.api.upload<Batch>('/api/historian/import-batches', data, (fraction) => {
        progress.value = fraction
        progressText.textContent = fraction < 1 ? `Uploading… ${Math.round(fraction * 100)} %` : 'Uploaded; reading…'
      })
    }

    // Read the tags: a dry run with the chosen mapping file (or a header alone: every tag is then unmapped and listed).
    form.addEventListener('submit', (event) => {
      event.preventDefault()
      void (async () => {
        if (!trend.files?.[0]) {
          showProblem(form, new ApiProblem(400, { detail: 'Choose the export.', errors: [{ pointer: '/trend_csv', message: 'Required.' }] }))
          return
        }
        const mappingFile = mapping.files?.[0]
        read.disabled = true
        submit.disabled = true
        editorBox.hidden = true
        clear(outcome)
        clearProblems(form)
        try {
          const [dryRun, instances] = await Promise.all([
            upload(
              formData(mappingFile ?? new Blob(['historian_tag,instance_id,tag_key\r\n'], { type: 'text/csv' }), mappingFile?.name ?? 'mapping.csv', {
                dryRun: 'true',
                maxRejections: '0',
              }),
            ),
            siteInstances(),
          ])
          progressText.textContent = `Read ${dryRun.rowsRead} rows (${dryRun.format}).`
          editor = mappingEditor(rowsOf(dryRun, instances), instances, { listedAll: dryRun.unmappedTags.length < 1000 })
          clear(editorBody)
          editorBody.append(editor.element)
          editorBox.hidden = false
          submit.disabled = false
        } catch (error) {
          progressRow.hidden = true
          showProblem(form, error)
        } finally {
          read.disabled = false
        }
      })()
    })

    submit.addEventListener('click', () => {
      void (async () => {
        if (!editor || !trend.files?.[0]) return
        const name = trend.files[0].name.replace(/\.[^.]*$/, '')
        const mappingText = mappingCsv(editor.rows())
        submit.disabled = true
        clear(outcome)
        clearProblems(editorBox)
        try {
          const batch = await upload(
            formData(
              new Blob([mappingText], { type: 'text/csv' }),
              `${name}.mapping.csv`,
              force.checked ? { force: 'true', maxRejections: '1000' } : { maxRejections: '1000' },
            ),
          )
          progress.value = 1
          progressText.textContent = `Batch ${batch.status}.`
          append(
            outcome,
            h(
              'p',
              { class: `status-${batch.status}`, role: 'status' },
              `Imported ${batch.samplesStored} samples from ${batch.rowsRead} rows (${batch.format}); ${batch.rowsRejected} rejected`,
              batch.collisions ? `, ${batch.collisions} not stored (another batch holds those values)` : '',
              batch.replaced ? `, ${batch.replaced} replaced` : '',
              '.',
            ),
            rejectionsByReason(batch),
          )
          await batches.first()
          if (batch.status === 'complete' && batch.tags.length > 0) void chooseBatch(batch)
        } catch (error) {
          progressRow.hidden = true
          // Shown above the editor, beside the force box: the mapping's problems name lines of the mapping it made.
          if (error instanceof ApiProblem && error.status === 409) {
            showProblem(editorBox, new ApiProblem(409, { detail: `${error.detail ?? 'These files were imported before.'} Tick "force" to import them again.` }))
          } else showProblem(editorBox, error)
        } finally {
          submit.disabled = false
        }
      })()
    })

    /** Every instance of the site (their tag mappings feed the proposals). */
    async function siteInstances(): Promise<Instance[]> {
      const all: Instance[] = []
      let cursor: string | undefined
      do {
        const answer = await ctx.api.get<PageOf<Instance>>(`/api/sites/${encodeURIComponent(site())}/instances`, { limit: 1000, cursor })
        all.push(...answer.items)
        cursor = answer.nextCursor ?? undefined
      } while (cursor)
      return all
    }
  } else {
    uploadBox.append(h('p', { class: 'notice' }, 'Importing needs the admin or owner role; you can read the batches and trends.'))
  }

  // Trend: pick tags (from the batches shown) and a period.
  const picker = h('fieldset', { class: 'tag-picker' }, h('legend', {}, 'Tags'))
  const fromInput = h('input', { type: 'datetime-local', name: 'from', required: true, step: 1 })
  const toInput = h('input', { type: 'datetime-local', name: 'to', required: true, step: 1 })
  const draw = h('button', { type: 'submit', class: 'primary' }, 'Show trend')
  const trendForm = h('form', { class: 'filters', 'aria-label': 'Trend period and tags' }, field('From', fromInput), field('To', toInput), draw)
  const chartBox = h('div', { class: 'trend-box' })
  trendBox.append(h('p', { class: 'hint' }, 'Choose "Trend" on a completed batch, or tick tags and a period.'), picker, trendForm, chartBox)
  let chart: TrendChart | null = null
  // Ticking tags with no period chosen yet proposes the period their samples cover.
  picker.addEventListener('change', () => {
    if (fromInput.value && toInput.value) return
    const checked = [...picker.querySelectorAll<HTMLInputElement>('input[type=checkbox]:checked')]
    const firsts = checked.map((c) => Number(c.dataset.first)).filter(Number.isFinite)
    const lasts = checked.map((c) => Number(c.dataset.last)).filter(Number.isFinite)
    if (firsts.length === 0 || lasts.length === 0) return
    fromInput.value = wallClock(Math.min(...firsts), zone)
    toInput.value = wallClock(after(Math.max(...lasts)), zone)
  })

  /** The tag picker: the tags of `batch`, or of every complete batch shown (read whole, in parallel). */
  // The latest call wins: the page's first listing (all batches, read over the network) must not replace the tags
  // of a batch whose "Trend" was chosen meanwhile.
  let pickerGeneration = 0
  async function tagOptions(batch: Batch | null): Promise<void> {
    const mine = ++pickerGeneration
    let sources: Batch[]
    try {
      sources = batch ? [batch] : await Promise.all(shown.filter((x) => x.id && isReadable(x) && x.tagCount > 0).map((x) => wholeBatch(x.id!)))
      if (mine !== pickerGeneration) return
    } catch (error) {
      if (mine !== pickerGeneration) return
      clear(picker)
      picker.append(h('legend', {}, 'Tags'), h('p', { class: 'form-error', role: 'alert' }, messageOf(error)))
      return
    }
    const seen = new Map<string, { series: TrendSeries; first: number; last: number }>()
    for (const b of sources) {
      for (const t of b.tags) {
        const key = `${t.instanceId}\u0000${t.tagKey}`
        const first = t.firstTs ? Date.parse(t.firstTs) : NaN
        const last = t.lastTs ? Date.parse(t.lastTs) : NaN
        const had = seen.get(key)
        seen.set(key, {
          series: { instanceId: t.instanceId, tag: t.tagKey, unit: t.unit, label: `${t.instanceId} · ${t.tagKey}${t.unit ? ` (${t.unit})` : ''}` },
          first: Math.min(had?.first ?? Infinity, first),
          last: Math.max(had?.last ?? -Infinity, last),
        })
      }
    }
    clear(picker)
    picker.append(h('legend', {}, 'Tags'))
    if (seen.size === 0) picker.append(h('p', { class: 'empty' }, 'No imported tags yet.'))
    let i = 0
    for (const [key, { series, first, last }] of seen) {
      const id = `hist-tag-${i++}`
      picker.append(
        h(
          'span',
          { class: 'check' },
          h('input', {
            type: 'checkbox',
            id,
            value: key,
            checked: batch !== null && i <= 8,
            'data-instance-id': series.instanceId,
            'data-tag': series.tag,
            'data-first': first,
            'data-last': last,
            'data-label': series.label ?? '',
            'data-unit': series.unit ?? '',
          }),
          h('label', { for: id }, series.label ?? key),
        ),
      )
    }
  }

  async function chooseBatch(b: Batch): Promise<void> {
    await tagOptions(b)
    if (b.timeRange) {
      fromInput.value = wallClock(Date.parse(b.timeRange.from), zone)
      toInput.value = wallClock(after(Date.parse(b.timeRange.to)), zone)
    }
    const drawn = drawTrend() // puts the chart in place at once, before the page scrolls to it
    trendBox.scrollIntoView({ block: 'nearest' })
    await drawn
  }

  /** "Trend" on a listed batch: its tags come with the whole batch. */
  async function trendOf(id: string): Promise<void> {
    try {
      await chooseBatch(await wholeBatch(id))
    } catch (error) {
      clear(chartBox)
      chartBox.append(h('p', { class: 'form-error', role: 'alert' }, messageOf(error)))
    }
  }

  async function drawTrend(): Promise<void> {
    const checked = [...picker.querySelectorAll<HTMLInputElement>('input[type=checkbox]:checked')]
    const from = fromWallClock(fromInput.value, zone)
    const to = fromWallClock(toInput.value, zone)
    clear(chartBox)
    chart?.destroy()
    chart = null
    if (checked.length === 0 || !Number.isFinite(from) || !Number.isFinite(to) || to <= from) {
      chartBox.append(
        h('p', { class: 'form-error', role: 'alert' }, checked.length === 0 ? 'Tick at least one tag.' : 'Choose a period whose end is after its start.'),
      )
      return
    }
    const series = checked.map((c) => ({
      instanceId: c.dataset.instanceId ?? '',
      tag: c.dataset.tag ?? '',
      label: c.dataset.label || undefined,
      unit: c.dataset.unit || null,
    }))
    chart = createTrendChart({ api: ctx.api, siteId: site(), series, from, to, timeZone: zone })
    chartBox.append(chart.element)
    await chart.load()
  }

  trendForm.addEventListener('submit', (e) => {
    e.preventDefault()
    void drawTrend()
  })
  // "Times in": the site's zone or the browser's, for the whole page; the period typed so far keeps its instants.
  const placeZoneToggle = () => {
    const toggle = zoneToggle(siteZone(), (shown) => {
      const period = [fromWallClock(fromInput.value, zone), fromWallClock(toInput.value, zone)]
      zone = shown
      if (Number.isFinite(period[0])) fromInput.value = wallClock(period[0]!, zone)
      if (Number.isFinite(period[1])) toInput.value = wallClock(period[1]!, zone)
      void batches.reload()
      if (chart) void drawTrend()
    })
    siteForm.querySelector('.zone-toggle')?.remove()
    siteForm.append(toggle)
    zone = toggle.dataset.zone ?? zone
  }
  placeZoneToggle()
  siteSelect.addEventListener('change', () => {
    const url = new URL(location.href)
    url.searchParams.set('site', site())
    history.replaceState(history.state, '', url)
    rejectionsBox.hidden = true
    placeZoneToggle()
    chart?.destroy()
    chart = null
    clear(chartBox)
    void batches.first().then(() => tagOptions(null))
  })

  await batches.reload()
  await tagOptions(null)
  const firstReadable = shown.find((b) => isReadable(b) && b.timeRange)
  if (firstReadable?.timeRange) {
    fromInput.value = wallClock(Date.parse(firstReadable.timeRange.from), zone)
    toInput.value = wallClock(after(Date.parse(firstReadable.timeRange.to)), zone)
  }
  return () => {
    stopped = true
    clearTimeout(pollTimer)
    chart?.destroy()
  }
}
