// The console's route table. `access` hides a page from the navigation (and shows a notice instead of it) for
// callers the API would refuse anyway: the API stays the authority.
import type { Page } from './context.ts'
import { page as adminAuditPage } from './pages/admin-audit.ts'
import { page as adminDomainsPage } from './pages/admin-domains.ts'
import { page as adminFleetPage } from './pages/admin-fleet.ts'
import { page as adminKeysPage } from './pages/admin-keys.ts'
import { page as adminMembersPage } from './pages/admin-members.ts'
import { page as adminSiteUsersPage } from './pages/admin-site-users.ts'
import { page as alarmsPage } from './pages/alarms.ts'
import { page as historianPage } from './pages/historian.ts'
import { page as linkPage } from './pages/link.ts'
import { page as sitePage } from './pages/site.ts'
import { page as sitesPage } from './pages/sites.ts'
import type { ConsolePath } from './paths.ts'

/**
 * `admin`: role admin or owner; `orgAdmin`: the same, never a site-PIN user (organisation administration);
 * `siteAdmin`: role admin or owner on a site server (site users exist only there); `fleetAdmin`: `orgAdmin` in the
 * cloud (the site servers are registered there); `siteMember`: anyone on a site server (its link to the cloud).
 */
export type Access = 'member' | 'admin' | 'orgAdmin' | 'siteAdmin' | 'fleetAdmin' | 'siteMember'

export interface RouteDef {
  path: ConsolePath
  title: string
  page?: Page
  /** Where a path without a page of its own goes (`/` → `/sites`). */
  redirect?: string
  access: Access
  nav?: { label: string; section: 'main' | 'admin' }
}

export const ROUTES: readonly RouteDef[] = [
  { path: '/', title: 'Home', redirect: '/sites', access: 'member' },
  { path: '/sign-in', title: 'Sign in', redirect: '/sites', access: 'member' },
  { path: '/sites', title: 'Sites', page: sitesPage, access: 'member', nav: { label: 'Sites', section: 'main' } },
  { path: '/sites/:code', title: 'Site', page: sitePage, access: 'member' },
  { path: '/alarms', title: 'Alarms', page: alarmsPage, access: 'member', nav: { label: 'Alarms', section: 'main' } },
  { path: '/historian', title: 'Historian', page: historianPage, access: 'member', nav: { label: 'Historian', section: 'main' } },
  { path: '/link', title: 'Cloud link', page: linkPage, access: 'siteMember', nav: { label: 'Cloud link', section: 'main' } },
  { path: '/admin/keys', title: 'API keys', page: adminKeysPage, access: 'admin', nav: { label: 'API keys', section: 'admin' } },
  { path: '/admin/site-users', title: 'Site users', page: adminSiteUsersPage, access: 'siteAdmin', nav: { label: 'Site users', section: 'admin' } },
  { path: '/admin/members', title: 'Members', page: adminMembersPage, access: 'orgAdmin', nav: { label: 'Members', section: 'admin' } },
  { path: '/admin/domains', title: 'Domain bindings', page: adminDomainsPage, access: 'orgAdmin', nav: { label: 'Domains', section: 'admin' } },
  { path: '/admin/audit', title: 'Audit log', page: adminAuditPage, access: 'orgAdmin', nav: { label: 'Audit log', section: 'admin' } },
  { path: '/admin/fleet', title: 'Fleet', page: adminFleetPage, access: 'fleetAdmin', nav: { label: 'Fleet', section: 'admin' } },
]
