// The site page's controllers: the table (connection, polling, edge assignment, poll budget) and, for admins, create,
// edit, delete and the edge assignment. The controller form shows the CIP route in words and the poll budget's
// warnings as the engineer types: the API's dry run (`dryRun=true` on create and update) answers the controller as it
// would be saved, so the console computes nothing itself.
import { PLATFORMS } from '../../../src/modules/controllers/codes.ts'
import type { Controller } from '../api-types.ts'
import type { PageContext } from '../context.ts'
import { openDialog } from '../dialog.ts'
import { field, h, messageOf, select, table, type Child } from '../dom.ts'
import { nullable, numeric, optional, typed } from '../forms.ts'
import { fillLastChanges, lastChangeSlot } from '../last-change.ts'
import { pager, type PageOf, type Pager } from '../paging.ts'
import { isAdmin, sitePath } from './site-parts.ts'

const PLATFORM_OPTIONS: Array<[string, string]> = PLATFORMS.map((p) => [String(p.code), p.name])
const CONNECTION_NUMBERS = [
  ['pollIntervalMs', 'Poll interval (ms)'],
  ['timeoutMs', 'Timeout (ms)'],
  ['retryDelayMs', 'Retry delay (ms)'],
  ['maxRetries', 'Retries'],
] as const

/** The controllers section of the site page; `names` learns each controller's label for the instances table. */
export function controllersSection(box: HTMLElement, ctx: PageContext, code: string, names: Map<string, string>): Pager {
  const controllers = pager<Controller>(
    box,
    'Controllers',
    (cursor) => ctx.api.get<PageOf<Controller>>(`${sitePath(code)}/controllers`, { limit: 25, cursor }),
    (items) => {
      for (const c of items) names.set(c.id, c.name ?? c.assetNumber)
      const el = controllerTable(items, ctx, code, refresh)
      void fillLastChanges(ctx, el, 'controllers')
      return el
    },
  )
  function refresh(): void {
    void controllers.reload()
  }
  if (isAdmin(ctx)) {
    box.querySelector('h2')?.after(
      h(
        'p',
        {},
        h(
          'button',
          {
            type: 'button',
            class: 'primary',
            onclick: () => {
              void editController(ctx, code, null, refresh)
            },
          },
          'New controller',
        ),
      ),
    )
  }
  return controllers
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
        const button = (text: string, aria: string, onclick: () => void, kind = 'secondary') =>
          h('button', { type: 'button', class: `${kind} small`, 'aria-label': aria, onclick }, text)
        cells.push(
          h(
            'span',
            { class: 'row-actions' },
            button('Edit', `Edit ${label}`, () => {
              void editController(ctx, code, c, refresh)
            }),
            button(c.edgeId ? 'Reassign' : 'Assign', `${c.edgeId ? 'Reassign' : 'Assign'} ${label} to an edge gateway`, () => {
              void assign(ctx, code, c, refresh)
            }),
            c.edgeId
              ? button('Unassign', `Unassign ${label} from edge ${c.edgeId}`, () => {
                  ctx.api.send('POST', `${sitePath(code)}/controllers/${encodeURIComponent(c.id)}/unassign`).then(
                    () => {
                      ctx.notify(`${label} unassigned.`)
                      refresh()
                    },
                    (error: unknown) => ctx.notify(messageOf(error), 'error'),
                  )
                })
              : null,
            button(
              'Delete',
              `Delete ${label}`,
              () => {
                void deleteController(ctx, code, c, refresh)
              },
              'danger',
            ),
          ),
        )
      }
      return { attrs: { 'data-controller-id': c.id }, cells }
    }),
    { empty: 'No controllers in this site.' },
  )
}

/** What the API says of the controller as it would be saved: the CIP route in words and the poll budget. */
function budgetPreview(c: Controller): Child[] {
  const b = c.pollBudget
  return [
    h('h3', {}, 'As the API sees it'),
    h('p', { class: 'cip-route' }, c.cipRoute ? `CIP route: ${c.cipRoute.explanation}` : 'CIP route: none (not a CIP protocol, or no path).'),
    h(
      'p',
      {},
      `Poll budget: ${b.mappedTags} mapped tags of ${b.instances} instances, ~${b.estimatedPollMs} ms per poll (${Math.round(b.utilisation * 100)} % of the interval); `,
      `a silent controller is noticed after ${Math.round(b.failureDetectionMs / 1000)} s.`,
    ),
    b.warnings.length > 0
      ? h('ul', { class: 'poll-warnings' }, ...b.warnings.map((w) => h('li', { class: 'warn-text', 'data-code': w.code }, w.message)))
      : null,
  ]
}

/** The create (`c` null) or edit form; every value goes to the API as typed (an empty number keeps the default or the stored value). */
async function editController(ctx: PageContext, code: string, c: Controller | null, refresh: () => void): Promise<void> {
  const text = (name: string, value: string | number | null | undefined, extra: Record<string, string | boolean> = {}) =>
    h('input', { type: 'text', name, value: value ?? '', autocomplete: 'off', spellcheck: 'false', ...extra })
  const numberInput = (name: string, value: number | null | undefined) => text(name, value, { inputmode: 'numeric' })
  const conn = c?.connection
  const fields = [
    field('Name', text('name', c?.name, { required: !c }), { pointer: '/name' }),
    c ? null : field('Asset number', text('assetNumber', '', { required: true }), { pointer: '/assetNumber', hint: 'Unique in the site; fixed once created.' }),
    field('Platform', select('platform', PLATFORM_OPTIONS, String(c?.platform ?? 1)), { pointer: '/platform' }),
    field('Firmware version', text('firmwareVersion', c?.firmwareVersion), { pointer: '/firmwareVersion' }),
    field('Protocol', text('protocol', conn?.protocol ?? 'EtherNet/IP', { required: true }), { pointer: '/connection/protocol' }),
    field('IP address or host name', text('ipAddress', conn?.ipAddress, { required: true }), { pointer: '/connection/ipAddress' }),
    field('Port', numberInput('port', conn?.port), { pointer: '/connection/port', hint: c ? undefined : "Empty: the protocol's well-known port." }),
    field('CIP path', text('cipPath', conn?.cipPath), {
      pointer: '/connection/cipPath',
      hint: 'Port,link pairs, e.g. 1,0 (backplane slot 0) or 2,10.0.0.5,1,0. Empty: a direct connection.',
    }),
    h(
      'div',
      { class: 'field-grid' },
      ...CONNECTION_NUMBERS.map(([name, label]) =>
        field(label, numberInput(name, conn?.[name]), { pointer: `/connection/${name}`, hint: c ? undefined : 'Empty: the default.' }),
      ),
    ),
  ].filter((el) => el !== null)

  const connection = (data: FormData) => ({
    protocol: typed(data, 'protocol'),
    ipAddress: typed(data, 'ipAddress'),
    port: numeric(data, 'port'),
    cipPath: c ? nullable(data, 'cipPath') : optional(data, 'cipPath'),
    pollIntervalMs: numeric(data, 'pollIntervalMs'),
    timeoutMs: numeric(data, 'timeoutMs'),
    retryDelayMs: numeric(data, 'retryDelayMs'),
    maxRetries: numeric(data, 'maxRetries'),
  })
  const body = (data: FormData) =>
    c
      ? {
          name: nullable(data, 'name'),
          platform: Number(typed(data, 'platform')),
          firmwareVersion: nullable(data, 'firmwareVersion'),
          connection: connection(data),
        }
      : {
          name: typed(data, 'name'),
          assetNumber: typed(data, 'assetNumber'),
          platform: Number(typed(data, 'platform')),
          firmwareVersion: optional(data, 'firmwareVersion'),
          connection: connection(data),
        }
  const base = `${sitePath(code)}/controllers`
  const write = (data: FormData, dryRun: boolean) =>
    ctx.api.send<Controller>(c ? 'PUT' : 'POST', `${c ? `${base}/${encodeURIComponent(c.id)}` : base}${dryRun ? '?dryRun=true' : ''}`, body(data))

  const done = await openDialog({
    title: c ? `Edit ${c.name ?? c.assetNumber}` : 'New controller',
    fields,
    submitLabel: c ? 'Save controller' : 'Create controller',
    onSubmit: async (data) => {
      await write(data, false)
    },
    preview: async (data) => budgetPreview(await write(data, true)),
  })
  if (!done) return
  ctx.notify(c ? `${c.name ?? c.assetNumber} saved.` : 'Controller created.')
  refresh()
}

async function deleteController(ctx: PageContext, code: string, c: Controller, refresh: () => void): Promise<void> {
  const label = c.name ?? c.assetNumber
  const done = await openDialog({
    title: `Delete ${label}?`,
    body: [h('p', {}, 'The controller goes; the API refuses while instances are bound to it.')],
    submitLabel: 'Delete controller',
    danger: true,
    onSubmit: async () => {
      await ctx.api.send('DELETE', `${sitePath(code)}/controllers/${encodeURIComponent(c.id)}`)
    },
  })
  if (!done) return
  ctx.notify(`${label} deleted.`)
  refresh()
}

async function assign(ctx: PageContext, code: string, c: Controller, refresh: () => void): Promise<void> {
  const edge = h('input', { name: 'edgeId', maxlength: 50, value: c.edgeId ?? '', autocomplete: 'off' })
  const plc = h('input', { name: 'edgePlcId', maxlength: 100, value: c.edgePlcId ?? '', autocomplete: 'off' })
  const done = await openDialog({
    title: `Assign ${c.name ?? c.assetNumber} to an edge gateway`,
    fields: [
      field('Edge gateway id', edge, { pointer: '/edgeId', hint: 'Empty: no gateway (unassigns).' }),
      field('Id of the controller on the gateway (optional)', plc, { pointer: '/edgePlcId' }),
    ],
    submitLabel: 'Assign',
    async onSubmit(data) {
      await ctx.api.send('POST', `${sitePath(code)}/controllers/${encodeURIComponent(c.id)}/assign`, {
        edgeId: typed(data, 'edgeId'),
        edgePlcId: nullable(data, 'edgePlcId'),
      })
    },
  })
  if (done) {
    ctx.notify('Edge assignment saved.')
    refresh()
  }
}
