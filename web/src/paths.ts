// The console's client-side paths (history routing). The server answers index.html for exactly these
// (src/modules/console/routes.ts imports this list), so a reload or a bookmark of any console page works and
// every other path keeps its own 404. Pure data: no DOM, importable by the server.
export const CONSOLE_PATHS = [
  '/',
  '/sign-in',
  '/sites',
  '/sites/:code',
  '/alarms',
  '/historian',
  '/admin/keys',
  '/admin/site-users',
  '/admin/members',
  '/admin/domains',
  '/admin/audit',
  '/admin/fleet',
  '/link',
] as const

export type ConsolePath = (typeof CONSOLE_PATHS)[number]
