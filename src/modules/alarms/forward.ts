/*
 * Issue 26, the fleet link: in the cloud, a linked site's alarms are kept by its site server. An action taken on one
 * of them is not applied here; it is forwarded as a command that the site server applies under the normal rules
 * (modules/fleet/commands). This area declares what it needs from the link; app.ts hands it the fleet's part.
 */
import type { TSchema } from 'typebox'
import { Value } from 'typebox/value'
import type { Db } from '../../db/schema.ts'
import { invalidField } from '../../errors/domain-error.ts'
import type { Actor } from '../../identity.ts'
import type { OrgId } from '../../ids.ts'
import type { OperatorAction } from './lifecycle.ts'
import { AcknowledgeBody, ALARM_ACTIONS, CommentBody, ShelveBody, type Alarm, type AlarmActionName, type AlarmCommand } from './schemas.ts'

/** Which sites a site server keeps (cloud): a site listed by a registered, non-revoked site server, enrolled or not. */
export interface LinkedSites {
  isLinked(db: Db, orgId: OrgId, siteCode: string): Promise<boolean>
}

export interface ForwardRequest {
  siteCode: string
  alarmId: string
  action: AlarmActionName
  /** The request body, as the route received it. */
  body: Record<string, unknown>
  actor: Actor
}

/** Keeps the actions on linked sites' alarms as pending commands for their site server. */
export interface AlarmCommandQueue {
  enqueue(db: Db, orgId: OrgId, request: ForwardRequest): Promise<AlarmCommand>
  countPending(db: Db, orgId: OrgId, siteCode: string, alarmId: string): Promise<number>
}

/** Cloud mode only; absent on a site server, where every action applies here. */
export interface AlarmLink {
  sites: LinkedSites
  commands: AlarmCommandQueue
}

/** An action's answer when it was forwarded rather than applied: the route answers 202 with `answer`. */
export class ForwardedToSite<T> {
  constructor(readonly answer: T) {}
}

/**
 * Site: called in the transaction that applies a forwarded action, with the alarm's new state, so the action and the
 * command's settlement commit together (or neither does).
 */
export type SettleApplied = (trx: Db, alarm: Alarm) => Promise<void>

/** The lifecycle's action of each route name but shelve (which carries its end). */
export const OPERATOR_ACTIONS: Record<Exclude<AlarmActionName, 'shelve'>, OperatorAction> = {
  acknowledge: 'acknowledge',
  unshelve: 'unshelve',
  'out-of-service': 'remove_from_service',
  'return-to-service': 'return_to_service',
}

export type CheckedAction = { action: Exclude<AlarmActionName, 'shelve'>; comment: string | null } | { action: 'shelve'; comment: string; until: string }

const BODIES: Record<AlarmActionName, TSchema> = {
  acknowledge: AcknowledgeBody,
  shelve: ShelveBody,
  unshelve: CommentBody,
  'out-of-service': CommentBody,
  'return-to-service': CommentBody,
}

/**
 * A forwarded action, checked on the site server against the same schema as its route: a command arrives over the
 * link as data, so its action and body are checked again. ValidationFailed names the first bad field.
 */
export function checkForwardedAction(action: string, body: unknown): CheckedAction {
  if (!(ALARM_ACTIONS as readonly string[]).includes(action)) throw invalidField('/action', `is not an alarm action (${ALARM_ACTIONS.join(', ')})`)
  const name = action as AlarmActionName
  const schema = BODIES[name]
  const first = [...Value.Errors(schema, body)].find((e) => e.keyword !== 'boolean') ?? [...Value.Errors(schema, body)][0]
  if (first) throw invalidField(first.instancePath || '/', first.message)
  const fields = (body ?? {}) as { comment?: string; until?: string }
  if (name === 'shelve') return { action: name, comment: fields.comment!, until: fields.until! }
  return { action: name, comment: fields.comment ?? null }
}
