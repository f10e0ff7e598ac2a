/**
 * Layering rules (ARCHITECTURE.md § Module layout), checked in the test command by `npm run layers`.
 * Below the modules: the shared leaves (identity, ids, clock), then errors, config, db, http, auth and jobs; above them: app.ts and cli/,
 * the composition roots. Tests and test support may reach anywhere.
 */
const TESTS = '(\\.test\\.ts$|/test-[a-z-]+\\.ts$|-harness\\.ts$|route-test-setup\\.ts$)'

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'no-cycles',
      severity: 'error',
      comment: 'An import cycle: two files that cannot be understood, tested or moved one without the other.',
      from: { path: '^src/', pathNot: TESTS },
      to: { circular: true },
    },
    {
      name: 'no-upward-imports',
      severity: 'error',
      comment: 'Nothing below modules/ imports a module: identity, HTTP plumbing, the database and jobs are given what they need by app.ts.',
      from: { path: '^src/(auth|config|db|errors|http|jobs|identity\\.ts|clock\\.ts|ids\\.ts)', pathNot: TESTS },
      to: { path: '^src/(modules|cli|app\\.ts)' },
    },
    {
      name: 'leaf-modules',
      severity: 'error',
      comment: 'identity.ts (Org, Principal, Role, Actor), ids.ts and clock.ts are what every layer shares: they import nothing of ours but ids.',
      from: { path: '^src/(identity|ids|clock)\\.ts$' },
      to: { path: '^src/', pathNot: '^src/ids\\.ts$' },
    },
    {
      name: 'no-foreign-store',
      severity: 'error',
      comment: "A module reaches another module's data through that module's service, never its store.",
      from: { path: '^src/modules/([^/]+)/', pathNot: TESTS },
      to: { path: '^src/modules/[^/]+/(store/|[^/]*store\\.ts$)', pathNot: '^src/modules/$1/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    includeOnly: '^src/',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
}
