import type { InstancesTable } from '../../db/schema.ts'
import type { OrgId } from '../../ids.ts'
import { canonicalJson } from './limits.ts'
import type { CreateInstanceInput, Instance } from './schemas.ts'

const iso = (ms: number) => new Date(ms).toISOString()

export function toInstance(row: InstancesTable): Instance {
  return {
    id: row.id,
    siteId: row.site_code,
    name: row.name,
    typeId: row.type_id,
    typeVersion: row.type_version,
    assetNumber: row.asset_number,
    controllerId: row.controller_id,
    area: row.area,
    tagMappings: JSON.parse(row.tag_mappings) as Record<string, string>,
    config: JSON.parse(row.config) as Record<string, unknown>,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  }
}

/** The row an instance body describes (absent optional fields empty), for inserts and whole-body replacement. */
export function rowOf(orgId: OrgId, siteCode: string, input: CreateInstanceInput, now: number): InstancesTable {
  const tagMappings = input.tagMappings ?? {}
  return {
    org_id: orgId,
    site_code: siteCode,
    id: input.id,
    name: input.name,
    type_id: input.typeId,
    type_version: input.typeVersion ?? null,
    asset_number: input.assetNumber,
    controller_id: input.controllerId,
    area: input.area ?? null,
    tag_mappings: canonicalJson(tagMappings),
    tag_count: Object.keys(tagMappings).length,
    config: canonicalJson(input.config ?? {}),
    created_at: now,
    updated_at: now,
  }
}
