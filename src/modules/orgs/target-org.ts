import { enterRequestOrgScope } from '../../db/tenant-scope.ts'
import type { FastifyRequest } from 'fastify'
import { NotFound } from '../../errors/domain-error.ts'
import type { Org } from '../../identity.ts'
import type { OrgsService } from './service.ts'

/**
 * Spec 4.5: `{slug}` in an administration path must be the host's organisation, else the uniform 404 (the
 * same answer as an organisation that does not exist), unless the caller is a platform admin, who may
 * administer any organisation from any host.
 */
export async function targetOrg(request: FastifyRequest, slug: string, orgs: Pick<OrgsService, 'findBySlug'>): Promise<Org> {
  if (slug === request.org.slug) return request.org
  if (!request.principal.isPlatformAdmin) throw new NotFound()
  const org = await orgs.findBySlug(slug)
  if (!org) throw new NotFound()
  // Row-level security: from here on the platform admin's request acts for the named organisation.
  enterRequestOrgScope(org.id)
  return org
}
