import type { LinkCommandsTable } from '../../../db/schema.ts'
import type { AlarmCommand } from './schemas.ts'

const iso = (ms: number) => new Date(ms).toISOString()

export function toCommand(row: LinkCommandsTable): AlarmCommand {
  const actor = JSON.parse(row.actor) as { kind?: unknown; subject?: unknown }
  return {
    commandId: row.id,
    siteId: row.site_code,
    alarmId: row.alarm_id,
    action: row.action as AlarmCommand['action'],
    body: JSON.parse(row.body) as Record<string, unknown>,
    actor: { kind: String(actor.kind), subject: String(actor.subject) },
    status: row.status as AlarmCommand['status'],
    createdAt: iso(row.created_at),
    settledAt: row.settled_at === null ? null : iso(row.settled_at),
    result: row.result === null ? null : (JSON.parse(row.result) as AlarmCommand['result']),
  }
}
