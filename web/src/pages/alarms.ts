// Alarms: the live list of a site's alarms (polled every few seconds while the page is open and visible), with
// filters (site, state, priority), acknowledge (members), shelve and unshelve (admins; comment and expiry), and
// the site's alarm load over the last day or week (GET …/alarms/load, ISA-18.2 / EEMUA 191 figures). Times are in
// the site's zone unless the engineer switches to the browser's (time-zone.ts).
// Cloud, a site linked to a site server (issue 26): an action is not applied here but forwarded (202 with a pending
// command): the console says so, marks the alarm's row while actions wait, and an alarm's details list its
// forwarded actions with their outcome (applied, or refused with the site server's reason).
import { adoptStyles } from '../adopt-styles.ts'
import type { Alarm, AlarmCommand, AlarmLoad, AlarmWithHistory, Site as SiteSummary } from '../api-types.ts'
import type { Page, PageContext } from '../context.ts'
import { openDialog } from '../dialog.ts'
import { append, clear, clearProblems, field, h, messageOf, select, showProblem, table, time, uid } from '../dom.ts'
import type { PageOf } from '../paging.ts'
import { renderAlarmLoadChart } from '../charts/alarm-load.ts'
import { fromWallClock, shownZone, wallClock, zoneToggle } from '../time-zone.ts'

export const POLL_MS = 4000

// Above the stacked-table width (700 px, styles.css) the list scrolls sideways inside its box while the actions column
// stays pinned at its right edge, so Acknowledge is on screen from 800 px.
const STYLES = `
@media (min-width: 701px){
.alarm-list td:last-child{position:sticky;right:0;background:var(--panel);box-shadow:-1px 0 0 var(--line)}
.alarm-list th:last-child{position:sticky;right:0;box-shadow:-1px 0 0 var(--line)}
}
`

const STATES: Array<[string, string]> = [
  ['active_unacknowledged', 'Active, unacknowledged'],
  ['active_acknowledged', 'Active, acknowledged'],
  ['returned_unacknowledged', 'Returned, unacknowledged'],
  ['normal', 'Normal'],
  ['shelved', 'Shelved'],
  ['out_of_service', 'Out of service'],
]
const PRIORITIES = ['critical', 'high', 'medium', 'low']
const stateLabel = (state: string) => STATES.find(([s]) => s === state)?.[1] ?? state
const canAcknowledge = (state: string) => state === 'active_unacknowledged' || state === 'returned_unacknowledged'
const ACTION_LABEL: Record<AlarmCommand['action'], string> = {
  acknowledge: 'Acknowledge',
  shelve: 'Shelve',
  unshelve: 'Unshelve',
  'out-of-service': 'Out of service',
  'return-to-service': 'Return to service',
}
/** Cloud, a linked site: the action was not applied here but sent to the site server (202 with the command). */
const isForwarded = (answer: unknown): answer is AlarmCommand => typeof answer === 'object' && answer !== null && 'commandId' in answer
const isAdmin = (ctx: PageContext) => ctx.principal.isPlatformAdmin === true || ctx.principal.role === 'admin' || ctx.principal.role === 'owner'

function checkboxGroup(legend: string, name: string, options: Array<[string, string]>, checked: string[]): HTMLFieldSetElement {
  return h(
    'fieldset',
    { class: 'checks' },
    h('legend', {}, legend),
    ...options.map(([value, label]) => {
      const id = uid(name)
      return h('span', { class: 'check' }, h('input', { type: 'checkbox', id, name, value, checked: checked.includes(value) }), h('label', { for: id }, label))
    }),
  )
}

export const page: Page = async (root, ctx) => {
  adoptStyles('alarms-page', STYLES)
  root.append(h('h1', {}, 'Alarms'))
  const sites = (await ctx.api.get<PageOf<SiteSummary>>('/api/sites', { limit: 500 })).items
  if (sites.length === 0) {
    root.append(h('p', { class: 'empty' }, 'No sites yet: alarms belong to a site.'))
    return
  }
  const wanted = ctx.query.get('site')
  const siteSelect = select(
    'site',
    sites.map((s) => [s.code, `${s.code} — ${s.name}`]),
    sites.some((s) => s.code === wanted) ? wanted! : sites[0]!.code,
  )
  const states = checkboxGroup('State', 'state', STATES, ctx.query.getAll('state'))
  const priorities = checkboxGroup(
    'Priority',
    'priority',
    PRIORITIES.map((p) => [p, p[0]!.toUpperCase() + p.slice(1)]),
    ctx.query.getAll('priority'),
  )
  const live = h('input', { type: 'checkbox', id: uid('live'), checked: true })
  const filters = h(
    'form',
    { class: 'filters', role: 'search', 'aria-label': 'Filter alarms' },
    field('Site', siteSelect),
    states,
    priorities,
    h('span', { class: 'check live' }, live, h('label', { for: live.id }, 'Live update')),
  )
  const siteZone = () => sites.find((s) => s.code === siteSelect.value)?.timeZone ?? 'UTC'
  let zone = shownZone(siteZone())
  const placeZoneToggle = () => {
    const toggle = zoneToggle(siteZone(), (shown) => {
      zone = shown
      void refresh()
      drawChart()
    })
    filters.querySelector('.zone-toggle')?.remove()
    filters.append(toggle)
    zone = toggle.dataset.zone ?? zone
  }
  const updated = h('p', { class: 'hint', 'aria-live': 'off' })
  const listBox = h('section', { 'aria-labelledby': 'alarm-list-heading' }, h('h2', { id: 'alarm-list-heading' }, 'Alarm list'), updated)
  const listBody = h('div', { class: 'alarm-list' })
  listBox.append(listBody)
  const loadBox = h('section', { 'aria-labelledby': 'alarm-load-heading', class: 'alarm-load' })
  root.append(filters, listBox, loadBox)

  // Actions forwarded to the site server and not settled yet, by alarm (GET /api/link/commands?status=pending).
  let pending = new Map<string, number>()
  /** Alarms with an acknowledge on its way to the site server: asking again would be refused there. */
  let ackPending = new Set<string>()
  const detailBox = h('section', { 'aria-labelledby': 'alarm-detail-heading', class: 'alarm-detail', hidden: true })
  listBox.after(detailBox)
  let detailAlarm: Alarm | undefined

  const checked = (set: HTMLFieldSetElement) => [...set.querySelectorAll<HTMLInputElement>('input:checked')].map((i) => i.value)
  const site = () => siteSelect.value
  const alarmsPath = () => `/api/sites/${encodeURIComponent(site())}/alarms`

  function syncUrl(): void {
    const q = new URLSearchParams({ site: site() })
    for (const s of checked(states)) q.append('state', s)
    for (const p of checked(priorities)) q.append('priority', p)
    history.replaceState(null, '', `/alarms?${q}`)
  }

  let stopped = false
  let refreshing = false
  async function refresh(): Promise<void> {
    if (refreshing || stopped) return
    refreshing = true
    try {
      const q = new URLSearchParams({ limit: '100' })
      for (const s of checked(states)) q.append('state', s)
      for (const p of checked(priorities)) q.append('priority', p)
      const [page, waiting] = await Promise.all([
        ctx.api.get<PageOf<Alarm>>(`${alarmsPath()}?${q}`),
        ctx.mode === 'cloud'
          ? ctx.api
              .get<PageOf<AlarmCommand>>('/api/link/commands', { status: 'pending', siteId: site(), limit: 1000 })
              .catch(() => ({ items: [], nextCursor: null }))
          : Promise.resolve({ items: [] as AlarmCommand[], nextCursor: null }),
      ])
      if (stopped) return
      pending = new Map()
      ackPending = new Set()
      for (const c of waiting.items) {
        pending.set(c.alarmId, (pending.get(c.alarmId) ?? 0) + 1)
        if (c.action === 'acknowledge') ackPending.add(c.alarmId)
      }
      // Keep the keyboard focus on the same action across a refresh.
      const focusKey = (document.activeElement as HTMLElement | null)?.dataset?.focusKey
      clear(listBody)
      listBody.append(
        renderList(page.items),
        page.nextCursor ? h('p', { class: 'hint' }, 'Showing the 100 most recently changed alarms; narrow the filters to see others.') : '',
      )
      if (focusKey) listBody.querySelector<HTMLElement>(`[data-focus-key="${CSS.escape(focusKey)}"]`)?.focus()
      updated.textContent = `Updated ${new Date().toLocaleTimeString()}${live.checked ? ' · live' : ''}`
      if (detailAlarm) void showDetail(detailAlarm, false)
    } catch (error) {
      if (!stopped) updated.textContent = `Could not refresh: ${messageOf(error)}`
    } finally {
      refreshing = false
    }
  }

  function renderList(alarms: Alarm[]): HTMLElement {
    return table(
      'Alarms, most recently changed first',
      ['Priority', 'Instance', 'Condition', 'State', 'Message', 'Value', 'Raised', 'Changed', 'Actions'],
      alarms.map((a) => ({
        attrs: { 'data-alarm-id': a.alarmId, 'data-state': a.state },
        cells: [
          h('span', { class: `priority priority-${a.priority}` }, a.priority),
          a.instanceId,
          a.condition,
          h(
            'span',
            { class: `state state-${a.state}` },
            stateLabel(a.state),
            a.shelvedUntil ? h('span', { class: 'hint' }, ' until ', time(a.shelvedUntil, zone)) : '',
            pending.has(a.alarmId)
              ? h(
                  'span',
                  { class: 'pending-badge', 'data-pending': String(pending.get(a.alarmId)) },
                  h('br'),
                  `${pending.get(a.alarmId)} action${pending.get(a.alarmId) === 1 ? '' : 's'} sent to the site server — pending`,
                )
              : '',
          ),
          a.message ?? '—',
          a.value === null ? '—' : `${a.value}${a.limit === null ? '' : ` (limit ${a.limit})`}`,
          time(a.raisedAt, zone),
          time(a.changedAt, zone),
          h(
            'span',
            { class: 'row-actions' },
            h(
              'button',
              {
                type: 'button',
                class: 'secondary small',
                'data-focus-key': `detail:${a.alarmId}`,
                'aria-label': `Details of ${a.instanceId} ${a.condition}`,
                onclick: () => {
                  void showDetail(a, true)
                },
              },
              'Details',
            ),
            canAcknowledge(a.state) && !ackPending.has(a.alarmId)
              ? h(
                  'button',
                  {
                    type: 'button',
                    class: 'primary small',
                    'data-focus-key': `ack:${a.alarmId}`,
                    'aria-label': `Acknowledge ${a.instanceId} ${a.condition}`,
                    onclick: () => {
                      void acknowledge(a)
                    },
                  },
                  'Acknowledge',
                )
              : null,
            isAdmin(ctx) && a.state !== 'shelved' && a.state !== 'out_of_service' && a.state !== 'normal'
              ? h(
                  'button',
                  {
                    type: 'button',
                    class: 'secondary small',
                    'data-focus-key': `shelve:${a.alarmId}`,
                    'aria-label': `Shelve ${a.instanceId} ${a.condition}`,
                    onclick: () => {
                      void shelve(a)
                    },
                  },
                  'Shelve',
                )
              : null,
            isAdmin(ctx) && a.state === 'shelved'
              ? h(
                  'button',
                  {
                    type: 'button',
                    class: 'secondary small',
                    'data-focus-key': `unshelve:${a.alarmId}`,
                    'aria-label': `Unshelve ${a.instanceId} ${a.condition}`,
                    onclick: () => {
                      void unshelve(a)
                    },
                  },
                  'Unshelve',
                )
              : null,
          ),
        ],
      })),
      { empty: 'No alarms match these filters.' },
    )
  }

  async function acknowledge(a: Alarm): Promise<void> {
    try {
      const answer = await ctx.api.send<Alarm | AlarmCommand>('POST', `${alarmsPath()}/${encodeURIComponent(a.alarmId)}/acknowledge`, {})
      ctx.notify(isForwarded(answer) ? forwardedNotice(answer, a) : `Acknowledged ${a.instanceId} ${a.condition}.`)
    } catch (error) {
      ctx.notify(messageOf(error), 'error')
    }
    await refresh()
  }

  async function shelve(a: Alarm): Promise<void> {
    const comment = h('textarea', { name: 'comment', required: true, maxlength: 500, rows: 3 })
    const now = Date.now()
    const until = h('input', {
      type: 'datetime-local',
      name: 'until',
      required: true,
      value: wallClock(now + 8 * 3_600_000, zone).slice(0, 16),
      min: wallClock(now, zone).slice(0, 16),
      max: wallClock(now + 7 * 86_400_000, zone).slice(0, 16),
    })
    let answer: unknown
    const done = await openDialog({
      title: `Shelve ${a.instanceId} ${a.condition}`,
      body: [h('p', {}, 'A shelved alarm is not annunciated until the shelve ends (at most 7 days); it then returns to its process state by itself.')],
      fields: [
        field('Reason', comment, { pointer: '/comment', hint: "Kept in the alarm's history and the audit trail." }),
        field('Shelved until', until, { pointer: '/until', hint: `In ${zone}.` }),
      ],
      submitLabel: 'Shelve alarm',
      onSubmit: async (data) => {
        const local = String(data.get('until'))
        const at = fromWallClock(local, zone)
        const untilIso = Number.isNaN(at) ? local : new Date(at).toISOString()
        answer = await ctx.api.send<Alarm | AlarmCommand>('POST', `${alarmsPath()}/${encodeURIComponent(a.alarmId)}/shelve`, {
          comment: String(data.get('comment')).trim(),
          until: untilIso,
        })
      },
    })
    if (done) ctx.notify(isForwarded(answer) ? forwardedNotice(answer, a) : `Shelved ${a.instanceId} ${a.condition}.`)
    await refresh()
  }

  async function unshelve(a: Alarm): Promise<void> {
    const comment = h('textarea', { name: 'comment', required: true, maxlength: 500, rows: 3 })
    let answer: unknown
    const done = await openDialog({
      title: `Unshelve ${a.instanceId} ${a.condition}`,
      fields: [field('Reason', comment, { pointer: '/comment' })],
      submitLabel: 'Unshelve alarm',
      onSubmit: async (data) => {
        answer = await ctx.api.send<Alarm | AlarmCommand>('POST', `${alarmsPath()}/${encodeURIComponent(a.alarmId)}/unshelve`, {
          comment: String(data.get('comment')).trim(),
        })
      },
    })
    if (done) ctx.notify(isForwarded(answer) ? forwardedNotice(answer, a) : `Unshelved ${a.instanceId} ${a.condition}.`)
    await refresh()
  }

  function forwardedNotice(command: AlarmCommand, a: Alarm): string {
    return `${ACTION_LABEL[command.action]} of ${a.instanceId} ${a.condition} sent to the site server — pending until the site server applies it.`
  }

  /** The alarm's history and, for a linked site, the actions forwarded to its site server with their outcome. */
  async function showDetail(a: Alarm, focus: boolean): Promise<void> {
    detailAlarm = a
    const base = `${alarmsPath()}/${encodeURIComponent(a.alarmId)}`
    try {
      const [alarm, commands] = await Promise.all([
        ctx.api.get<AlarmWithHistory>(base),
        ctx.api.get<PageOf<AlarmCommand>>(`${base}/commands`, { limit: 100 }).catch(() => ({ items: [] as AlarmCommand[], nextCursor: null })),
      ])
      if (stopped || detailAlarm !== a) return
      const close = h('button', { type: 'button', class: 'secondary small' }, 'Close details')
      close.addEventListener('click', () => {
        detailAlarm = undefined
        detailBox.hidden = true
        clear(detailBox)
      })
      clear(detailBox)
      append(
        detailBox,
        h('h2', { id: 'alarm-detail-heading', tabindex: '-1' }, `${alarm.instanceId} ${alarm.condition}`),
        h('p', {}, `${stateLabel(alarm.state)} · ${alarm.priority} · raised `, time(alarm.raisedAt, zone), ' ', close),
        h('h3', {}, 'Actions sent to the site server'),
        table(
          'Actions sent to the site server, oldest first',
          ['Action', 'Taken by', 'Taken', 'Status', 'Settled', 'Outcome'],
          commands.items.map((c) => ({
            attrs: { 'data-command-id': c.commandId, 'data-status': c.status },
            cells: [
              ACTION_LABEL[c.action],
              `${c.actor.kind} ${c.actor.subject}`,
              time(c.createdAt, zone),
              h(
                'span',
                { class: `command-status command-${c.status}` },
                c.status === 'pending' ? 'Pending on the site server' : c.status === 'applied' ? 'Applied' : 'Refused',
              ),
              time(c.settledAt, zone),
              c.status === 'refused'
                ? h('span', { class: 'warn-text' }, `${c.result?.code ?? 'Refused'}: ${c.result?.detail ?? ''}`)
                : c.status === 'applied' && c.result?.alarm
                  ? `Alarm ${stateLabel(c.result.alarm.state).toLowerCase()}`
                  : '—',
            ],
          })),
          { empty: 'None: no action on this alarm was forwarded to a site server.' },
        ),
        h('h3', {}, 'History'),
        table(
          'Alarm history, oldest first',
          ['When', 'Action', 'To state', 'By', 'Comment'],
          alarm.history.map((x) => [time(x.at, zone), x.action, stateLabel(x.toState), `${x.actorKind} ${x.actorId ?? ''}`, x.comment ?? '—']),
        ),
      )
      detailBox.hidden = false
      if (focus) detailBox.querySelector<HTMLElement>('h2')?.focus()
    } catch (error) {
      if (!stopped) ctx.notify(messageOf(error), 'error')
    }
  }

  // The alarm load over the last day or week, drawn by the shared chart (charts/alarm-load.ts), with the most
  // frequent and the chattering alarms as tables.
  const period = select(
    'period',
    [
      ['day', 'Last 24 hours'],
      ['week', 'Last 7 days'],
    ],
    'day',
  )
  const positions = h('input', { type: 'number', name: 'operatorPositions', min: 1, max: 100, value: '1', inputmode: 'numeric' })
  const loadForm = h(
    'form',
    { class: 'filters', novalidate: true, 'aria-label': 'Alarm load period' },
    field('Period', period),
    field('Operator positions', positions, { pointer: '/operatorPositions' }),
  )
  loadForm.addEventListener('submit', (e) => e.preventDefault())
  const loadBody = h('div', { class: 'load-body', 'aria-busy': 'false' })
  const chartEl = h('div', { class: 'chart' })
  loadBox.append(h('h2', { id: 'alarm-load-heading' }, 'Alarm load'), loadForm, chartEl, loadBody)
  let removeChart: (() => void) | undefined
  let shownLoad: AlarmLoad | undefined
  function drawChart(): void {
    removeChart?.()
    removeChart = shownLoad ? renderAlarmLoadChart(chartEl, shownLoad, zone) : undefined
  }

  async function refreshLoad(): Promise<void> {
    loadBody.setAttribute('aria-busy', 'true')
    clearProblems(loadForm)
    const hour = 3_600_000
    const to = Math.ceil(Date.now() / hour) * hour
    const from = to - (period.value === 'week' ? 7 * 24 : 24) * hour
    try {
      const load = await ctx.api.get<AlarmLoad>(`${alarmsPath()}/load`, {
        from: new Date(from).toISOString(),
        to: new Date(to).toISOString(),
        operatorPositions: positions.value || undefined,
      })
      if (stopped) return
      shownLoad = load
      drawChart()
      clear(loadBody)
      append(
        loadBody,
        h(
          'p',
          { class: 'hint' },
          `Target (EEMUA 191): about 1 alarm per 10 minutes per position, 2 at most. ${load.suppressedActivations} activation(s) while shelved or out of service are not counted.`,
        ),
        h('h3', {}, 'Most frequent'),
        table(
          'Most frequent alarms',
          ['Instance', 'Condition', 'Activations', 'Share'],
          load.mostFrequent.map((m) => [m.instanceId, m.condition, String(m.activations), `${m.percentOfTotal.toFixed(1)} %`]),
          { empty: 'No activations in this period.' },
        ),
        load.chattering.length > 0 ? h('h3', {}, 'Chattering') : null,
        load.chattering.length > 0
          ? table(
              'Chattering alarms',
              ['Instance', 'Condition', 'Activations', 'Most in 60 s'],
              load.chattering.map((c) => [c.instanceId, c.condition, String(c.activations), String(c.maxInWindow)]),
            )
          : null,
      )
    } catch (error) {
      if (!stopped) showProblem(loadForm, error)
    } finally {
      loadBody.setAttribute('aria-busy', 'false')
    }
  }

  const onFilter = () => {
    syncUrl()
    void refresh()
  }
  siteSelect.addEventListener('change', () => {
    placeZoneToggle()
    onFilter()
    void refreshLoad()
  })
  states.addEventListener('change', onFilter)
  priorities.addEventListener('change', onFilter)
  period.addEventListener('change', () => {
    void refreshLoad()
  })
  positions.addEventListener('change', () => {
    void refreshLoad()
  })
  filters.addEventListener('submit', (e) => e.preventDefault())
  const timer = setInterval(() => {
    if (live.checked && document.visibilityState === 'visible') void refresh()
  }, POLL_MS)

  placeZoneToggle()
  await Promise.all([refresh(), refreshLoad()])
  return () => {
    stopped = true
    clearInterval(timer)
    removeChart?.()
  }
}
