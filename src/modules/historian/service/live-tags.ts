import type { OrgId } from '../../../ids.ts'

/** The instances of a site and their tag keys (instances/service.ts). */
export interface TagDirectory {
  listTagMappings(orgId: OrgId, siteCode: string): Promise<Array<{ instanceId: string; tagMappings: Record<string, string> }>>
}

/**
 * The version of a site's equipment (edges/service.ts `configVersion`, the gateways' config ETag): moved by triggers in
 * the transaction of every change to its controllers and instances, by any writer. NotFound for an unknown site.
 */
export interface EquipmentVersions {
  configVersion(orgId: OrgId, siteCode: string): Promise<number>
}

/** The mapped tag keys by instance id (a Set: looking a key up in a mappings object internalized each sample's key string). */
export type SiteTags = ReadonlyMap<string, ReadonlySet<string>>

/** Sites whose tags a process keeps (the least recently pushed go first). */
const SITES_KEPT = 256

/**
 * A site's tag mappings for screening live pushes, read again only when its equipment version moved: a gateway
 * pushing every second costs one primary-key read here, not a read of every instance. The version is read before
 * the mappings, so a change committed in between is in the mappings or moved the version past the one they are kept
 * under; either way no push is screened against mappings older than the version it read.
 */
export function createLiveTags(deps: { versions: EquipmentVersions; instances: TagDirectory }) {
  const kept = new Map<string, { version: number; tags: SiteTags }>()
  return async function tagsOf(orgId: OrgId, siteCode: string): Promise<SiteTags> {
    const version = await deps.versions.configVersion(orgId, siteCode)
    const key = `${orgId}\u0000${siteCode}`
    const hit = kept.get(key)
    kept.delete(key)
    if (hit !== undefined && hit.version === version) {
      kept.set(key, hit)
      return hit.tags
    }
    const tags: SiteTags = new Map((await deps.instances.listTagMappings(orgId, siteCode)).map((i) => [i.instanceId, new Set(Object.keys(i.tagMappings))]))
    kept.set(key, { version, tags })
    if (kept.size > SITES_KEPT) kept.delete(kept.keys().next().value!)
    return tags
  }
}
