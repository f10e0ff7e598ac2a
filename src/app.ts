import { randomBytes } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type RawServerDefault } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { createApiKeyValidator } from './auth/api-key-validator.ts'
import { createLinkValidator } from './auth/link-validator.ts'
import { peekIssuer } from './auth/oidc/peek-issuer.ts'
import { createOidcPrincipalValidator } from './auth/oidc/principal-validator.ts'
import { startRelyingParty } from './auth/oidc/relying-party.ts'
import { sessionRoutes } from './auth/sessions/routes.ts'
import { createSessionsService } from './auth/sessions/service.ts'
import { sitePinRoutes } from './auth/site-pin/routes.ts'
import { createSiteSignIn } from './auth/site-pin/sign-in.ts'
import { createSigningKeys } from './auth/site-pin/signing-keys.ts'
import { createSitePinValidator } from './auth/site-pin/validator.ts'
import type { Clock } from './clock.ts'
import { createConfigHolder } from './config/holder.ts'
import { siteOrgAmbiguity } from './config/site-org.ts'
import { createIdentityServices } from './identity-services.ts'
import { createSiteServices } from './site-services.ts'
import type { Config } from './config/schema.ts'
import type { DatabaseHandle } from './db/connect.ts'
import { withSystemScope } from './db/tenant-scope.ts'
import { installAuth, type BearerValidator } from './http/auth.ts'
import { installDraining } from './http/drain.ts'
import { installIdempotency } from './http/idempotency.ts'
import { clientErrorProblem } from './http/client-error.ts'
import { installInputGuard } from './http/input-guard.ts'
import { healthRoutes } from './http/health.ts'
import { installMetricsRoute } from './http/metrics-endpoint.ts'
import { requestLogger } from './http/logger.ts'
import { createMetrics, installRequestMetrics, type Metrics } from './http/metrics.ts'
import { startServingJobs } from './serving-jobs.ts'
import { installOpenApi } from './http/openapi.ts'
import { frameworkErrorProblem, installProblemHandlers, MAX_PARAM_LENGTH, ProblemSchema } from './http/problem.ts'
import { createRateLimiter } from './http/rate-limit.ts'
import { buildSerializer } from './http/serializer.ts'
import { createTenancy, installHostRules } from './http/tenancy.ts'
import { installValidators } from './http/validation.ts'
import { createLastUsedTracker } from './jobs/last-used.ts'
import { aiRoutes } from './modules/ai/routes.ts'
import { alarmsRoutes } from './modules/alarms/routes.ts'
import { createAlarmsService } from './modules/alarms/service.ts'
import { createAiService } from './modules/ai/service.ts'
import { apiKeysRoutes } from './modules/api-keys/routes.ts'
import { historianRoutes, historianSeriesRoutes } from './modules/historian/routes.ts'
import { historianLiveRoutes } from './modules/historian/live-routes.ts'
import { historianTagRoutes } from './modules/historian/tag-routes.ts'
import { edgesRoutes } from './modules/edges/routes.ts'
import { createEdgesService } from './modules/edges/service.ts'
import { historianStoredParts } from './modules/historian/transfer.ts'
import { auditRoutes } from './modules/orgs/audit-routes.ts'
import { domainsRoutes } from './modules/orgs/domains-routes.ts'
import { createDomainsService } from './modules/orgs/domains-service.ts'
import { reloadRoutes } from './modules/orgs/reload-routes.ts'
import { createReloadService } from './modules/orgs/reload-service.ts'
import { tenantTransferRoutes } from './modules/tenant-transfer/routes.ts'
import { createTenantTransferService } from './modules/tenant-transfer/service.ts'
import { sitesRoutes } from './modules/sites/routes.ts'
import { controllersRoutes } from './modules/controllers/routes.ts'
import { instancesRoutes } from './modules/instances/routes.ts'
import { consoleRoutes, DEFAULT_CONSOLE_DIR } from './modules/console/routes.ts'
import { meRoutes } from './modules/me/routes.ts'
import { createMeService } from './modules/me/service.ts'
import { membersRoutes } from './modules/orgs/members-routes.ts'
import { siteUsersRoutes } from './modules/site-users/routes.ts'
import { siteUnlockRoutes } from './modules/site-users/unlock-route.ts'
import { electricalRoutes } from './modules/electrical/routes.ts'
import { createElectricalService } from './modules/electrical/service.ts'
import { linkEnrolmentRoutes } from './modules/fleet/site-servers/link-routes.ts'
import { siteServersRoutes } from './modules/fleet/site-servers/routes.ts'
import { historianChunksRoutes } from './modules/fleet/historian-chunks/routes.ts'
import { createHistorianChunksService } from './modules/fleet/historian-chunks/service.ts'
import { currentCursor } from './modules/fleet/outbox/store.ts'
import { createLinkCredentials } from './modules/fleet/site-servers/credentials.ts'
import { createSiteServersService } from './modules/fleet/site-servers/service.ts'
import { alarmCommandsRoutes, linkCommandsRoutes } from './modules/fleet/commands/routes.ts'
import { createCommandsService, linkedSites } from './modules/fleet/commands/service.ts'
import { linkConflictRoutes } from './modules/fleet/conflict-routes.ts'
import { lastChangeRoutes } from './modules/fleet/last-change.ts'
import { createLinkAgent } from './modules/fleet/agent/agent.ts'
import { createLinkHttp } from './modules/fleet/agent/http.ts'
import { executePendingCommands } from './modules/fleet/commands/execute.ts'
import { uploadBatchSamples } from './modules/fleet/historian-chunks/uploader.ts'
import { unsealLinkCredential } from './modules/fleet/enrolment/service.ts'
import { createLinkService } from './modules/fleet/link-service.ts'
import { linkStatusRoutes } from './modules/fleet/status.ts'
import { linkSyncRoutes } from './modules/fleet/sync-routes.ts'
import { createConflictsService } from './modules/fleet/sync/conflicts.ts'

export { createIdentityServices }

export interface AppDeps {
  config: Config
  handle: DatabaseHandle
  clock: Clock
  log: FastifyBaseLogger
  /** Rereads the configuration for POST /api/admin/config/reload (throws ConfigInvalid); absent: nothing to reread. */
  reloadConfig?: () => Config
  /** The web console's build (web/build.ts); absent: web/dist/console. */
  consoleDir?: string
  /** Tests: how long an alarm write that keeps losing its race is retried (alarms/retry.ts), so that it runs out at once. */
  alarmWrites?: { writeRetryDeadlineMs: number }
  /** The serving process (cli/server.ts): start every periodic job with the app (serving-jobs.ts); tests drive them directly. */
  runJobs?: boolean
  /** The process's metrics (cli/server.ts serves them); absent: a registry of the app's own. */
  metrics?: Metrics
}

/** The peer (hop 0) is the trusted proxy; whatever it forwards from before it is the client's word. */
const trustsOneHop = (_address: string, hop: number) => hop === 0

/** Builds the whole HTTP application from its dependencies; no globals, so tests build their own. */
export async function buildApp(
  deps: AppDeps,
): Promise<FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, FastifyBaseLogger, TypeBoxTypeProvider>> {
  const { config, handle, clock, log } = deps
  if (!config.keySecret) throw new TypeError('buildApp needs the API-key verifier secret')
  const requestIdPrefix = randomBytes(4).toString('hex')
  let requestCounter = 0
  // Fixed-length ids keep every uniform 401 the same length.
  const nextRequestId = () => `${requestIdPrefix}-${(requestCounter++ % 0xffffffff).toString(16).padStart(8, '0')}`
  const headersTimeout = Math.min(config.headersTimeoutMs, config.requestTimeoutMs)

  const app = Fastify({
    loggerInstance: log,
    childLoggerFactory: requestLogger,
    bodyLimit: config.bodyLimitBytes,
    // One hop, the load balancer in front: the client address is the last X-Forwarded-For entry (the one it appended);
    // `true` would trust every hop and take the first, which the client writes (a key's networks, the sign-in limits).
    trustProxy: config.trustProxy ? trustsOneHop : false,
    return503OnClosing: false, // draining serves the requests that arrive on open connections (http/drain.ts)
    // Slow clients (API4): a request must arrive whole within requestTimeout, its headers within headersTimeout;
    // at most maxConnections sockets are open (README § Resource limits).
    requestTimeout: config.requestTimeoutMs,
    // Node looks for requests past those timeouts every 30 s by default, which would let a 1 s headers timeout run
    // to 31 s: a tenth of the shorter timeout (at most Node's 30 s).
    http: { connectionsCheckingInterval: Math.min(30_000, Math.ceil(headersTimeout / 10)) },
    // A request Node's parser refuses (syntax, headers over 16 KiB, too slow) answers a problem document too.
    clientErrorHandler: clientErrorProblem(nextRequestId, log),
    genReqId: nextRequestId,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH },
    frameworkErrors: frameworkErrorProblem,
    schemaController: { compilersFactory: { buildSerializer } },
  }).withTypeProvider<TypeBoxTypeProvider>()
  app.server.headersTimeout = headersTimeout
  app.server.maxConnections = config.maxConnections

  const metrics = deps.metrics ?? createMetrics({ poolStats: () => handle.poolStats() })
  installRequestMetrics(app, metrics)
  app.addSchema(ProblemSchema)
  installValidators(app)
  installInputGuard(app)
  await installOpenApi(app, config)

  const { keySecret } = config
  const { orgs, apiKeys, members, platformAdmins, siteUsers, lockout } = createIdentityServices({ config, handle, clock })
  // A reload swaps in the reloadable settings (config/holder.ts); read them through the holder, not `config`.
  const holder = createConfigHolder(config, deps.reloadConfig ?? (() => config), (next) => {
    log.level = next.logLevel
  })
  const domains = createDomainsService({ handle, clock, baseDomain: config.baseDomain })
  const lastUsed = createLastUsedTracker({
    markUsed: apiKeys.markUsed,
    flushMs: config.lastUsedFlushMs,
    onError: (err) => log.warn({ err }, 'lastUsedAt flush failed'),
  })
  const tenancy = createTenancy({ config, orgs, handle, domains })
  // Site mode only: local site-PIN sign-in; on a cloud server `-local` issuers get the uniform 401.
  const signingKeys = config.mode === 'site' ? createSigningKeys({ handle, clock, keySecret }) : undefined
  const siteSignIn = signingKeys && createSiteSignIn({ handle, clock, siteUsers, signingKeys, lockout, log, lockouts: metrics.signIn })
  // Cloud people (issue 4): the OIDC relying party, loaded at start-up (discovery and key set, never on the request path).
  const relyingParty = config.oidc === undefined ? undefined : await startRelyingParty(config.oidc, clock, log)
  const bearerValidators: BearerValidator[] = [
    ...(signingKeys ? [createSitePinValidator({ signingKeys, siteUsers, clock, log })] : []),
    ...(relyingParty ? [createOidcPrincipalValidator({ relyingParty, members, platformAdmins, handle, log })] : []),
  ]
  installHostRules(app)
  installAuth(app, {
    config,
    tenancy,
    generation: handle.generation,
    validateApiKey: createApiKeyValidator({ handle, clock, keys: apiKeys, onUse: lastUsed.touch }),
    // Cloud mode: a site server's link credential (issue 26), for the link routes only.
    ...(config.mode === 'cloud' ? { validateLink: createLinkValidator({ handle, links: createLinkCredentials({ handle, keySecret }) }) } : {}),
    bearerValidators,
    peekIssuer,
    rateLimiter: createRateLimiter({ perMinute: () => holder.current().rateLimitPerMinute, clock, onRefused: () => metrics.rateLimited('credential') }),
    authRateLimiter: createRateLimiter({ perMinute: () => holder.current().authRateLimitPerMinute, clock, onRefused: () => metrics.rateLimited('sign_in') }),
    rowLevelSecurity: handle.dialect === 'postgres',
  })
  // After installAuth: its onRoute check (a policy on every route) and route table then see /problems/:code too.
  installProblemHandlers(app)
  installDraining(app)
  // GET /metrics on this listener only for the token's bearer (http/metrics-endpoint.ts); its own listener is cli/server.ts's.
  if (config.metrics.sealedToken) installMetricsRoute(app, metrics, config.metrics.sealedToken)
  installIdempotency(app, { handle, clock, keySecret: config.keySecret, waitMs: config.idempotencyWaitMs })

  await app.register(healthRoutes, {
    handle,
    openapi: () => app.swagger(),
    // A site server with several organisations and no SITEGRID_SITE_ORG says so (config/site-org.ts).
    warnings: async () => {
      if (config.mode !== 'site' || config.siteOrgSlug) return []
      const ambiguity = siteOrgAmbiguity(
        config,
        (await withSystemScope(() => orgs.list())).map((o) => o.slug),
      )
      return ambiguity ? [ambiguity] : []
    },
  })
  if (signingKeys && siteSignIn) {
    await app.register(sitePinRoutes, { tenancy, signIn: siteSignIn, signingKeys })
    await app.register(siteUsersRoutes, { prefix: '/api/site/users', siteUsers })
    await app.register(siteUnlockRoutes, { prefix: '/api/site/users', siteUsers, lockout })
  }
  await app.register(membersRoutes, { prefix: '/api/admin/orgs', members, orgs })
  // Browser sessions need a client of the provider as well.
  const client = config.oidc?.client
  if (relyingParty && client) {
    const sessions = createSessionsService({ handle, clock, relyingParty, client, members, platformAdmins, keySecret, log })
    await app.register(sessionRoutes, { sessions, tenancy, scheme: config.publicOriginScheme })
  }
  const { sites, controllers, instances, historian } = createSiteServices({ config, handle, clock, historianMeter: metrics.transfers('historian_import') })
  await app.register(sitesRoutes, { prefix: '/api/sites', sites })
  await app.register(controllersRoutes, { prefix: '/api/sites', controllers })
  await app.register(instancesRoutes, { prefix: '/api/sites', instances })
  const electrical = createElectricalService({ handle, clock, sites, networkLoad: { ...config.networkLoad, staleAfterMs: 2 * config.requestTimeoutMs } })
  await app.register(electricalRoutes, { prefix: '/api/sites', electrical })
  // Fleet link (issue 26): in the cloud, actions on a linked site's alarms are forwarded to its site server as commands.
  // The commands service reads an alarm through the alarms service, built just below (called only at request time).
  const commands = createCommandsService({ handle, clock, alarms: { get: (orgId, site, alarmId) => alarms.get(orgId, site, alarmId) } })
  const link = config.mode === 'cloud' ? { sites: linkedSites, commands: commands.queue } : undefined
  const alarms = createAlarmsService({ handle, clock, sites, instances, log, maxWaitingWrites: config.alarmWriteQueueMax, link, ...deps.alarmWrites })
  await app.register(alarmsRoutes, { prefix: '/api/sites', alarms })
  await app.register(alarmCommandsRoutes, { prefix: '/api/sites', commands })
  await app.register(linkCommandsRoutes, { prefix: '/api/link', commands })
  await app.register(historianRoutes, { prefix: '/api/historian/import-batches', historian, maxFileBytes: config.historianMaxFileBytes })
  await app.register(historianSeriesRoutes, { prefix: '/api/sites', historian })
  const edges = createEdgesService({
    handle,
    clock,
    sites,
    controllers,
    instances,
    alarms,
    staleAfterMs: config.edgeStaleAfterMs,
    maxWaitingTurns: config.edgeStatusQueueMax,
  })
  await app.register(historianLiveRoutes, { prefix: '/api/sites', handle, clock, sites, instances, versions: edges, limits: config.historianLive })
  await app.register(historianTagRoutes, { prefix: '/api/sites', handle, clock, sites, instances })
  await app.register(edgesRoutes, { prefix: '/api/sites', edges })
  if (deps.runJobs) {
    let stopJobs = async () => {}
    let stopping: Promise<void> | undefined
    app.addHook('onReady', async () => void (stopJobs = startServingJobs({ config, handle, clock, log, metrics, edges })))
    // Stopped as the close begins, so the jobs wind down while the requests drain; the close ends once both have.
    app.addHook('preClose', async () => void (stopping = stopJobs()))
    app.addHook('onClose', async () => stopping ?? stopJobs())
  }
  // A batch left running by a process that died: its samples go, it is marked failed (historian/store/session.ts).
  app.addHook('onReady', async () => {
    const cleaned = await withSystemScope(() => historian.recoverInterrupted()) // every organisation's batches
    if (cleaned > 0) log.warn({ cleaned }, 'historian: interrupted import batches marked failed')
  })
  // Staging rows of electrical network loads a stopped process left (electrical/service/network.ts).
  app.addHook('onReady', async () => {
    const cleaned = await withSystemScope(() => electrical.recoverNetworkStaging()) // every organisation's loads
    if (cleaned > 0) log.warn({ cleaned }, 'electrical: staging rows of interrupted network loads removed')
  })
  // AI grounding reads a site through the areas' own services.
  const grounding = { sites, controllers, alarms, electrical }
  await app.register(aiRoutes, { prefix: '/api/ai', ai: createAiService({ config, handle, clock, grounding, log }) })
  await app.register(apiKeysRoutes, { prefix: '/api/admin/api-keys', apiKeys })
  await app.register(meRoutes, { prefix: '/api/me', me: createMeService({ mode: config.mode, apiKeys, members, siteUsers }) })
  await app.register(consoleRoutes, { dir: deps.consoleDir ?? DEFAULT_CONSOLE_DIR, mode: config.mode, browserSignIn: config.oidc?.client !== undefined })
  await app.register(domainsRoutes, { prefix: '/api/admin/orgs', domains, orgs })
  await app.register(auditRoutes, { prefix: '/api/admin/orgs', handle, orgs })
  await app.register(reloadRoutes, { prefix: '/api/admin/config', mode: config.mode, reloads: createReloadService({ holder, handle, clock }) })

  const transfer = createTenantTransferService({
    handle,
    clock,
    mode: config.mode,
    baseDomain: config.baseDomain,
    sites,
    storedParts: historianStoredParts,
    maxPackageBytes: config.tenantPackageMaxBytes,
    maxInflatedBytes: config.tenantPackageMaxInflatedBytes,
    meters: { export: metrics.transfers('tenant_export'), import: metrics.transfers('tenant_import') },
  })
  await app.register(tenantTransferRoutes, { prefix: '/api/admin/orgs', orgs, transfer })

  if (config.mode === 'cloud') {
    const siteServers = createSiteServersService({
      handle,
      clock,
      keySecret,
      sites,
      currentCursor: (db, orgId) => currentCursor(db, handle.dialect, orgId),
      exportSite: (org, site, versions) => transfer.exportPackage(org, site, versions),
    })
    await app.register(siteServersRoutes, { prefix: '/api/admin/site-servers', siteServers })
    await app.register(linkEnrolmentRoutes, { tenancy, siteServers })
  }
  // Cloud mode: a site server's historian batches arrive in chunks before their rows (issue 26, fleet/historian-chunks).
  if (config.mode === 'cloud') {
    await app.register(historianChunksRoutes, { prefix: '/api/link/historian', chunks: createHistorianChunksService({ handle, clock, instances }) })
  }

  // Fleet link (issue 26): the versions that lost under the conflict rule (cloud: resolve; site: read).
  await app.register(linkConflictRoutes, { prefix: '/api/link/conflicts', conflicts: createConflictsService({ handle, clock }), mode: config.mode })
  // Fleet link (issue 26): which side last changed a record, for the consoles (both modes).
  await app.register(lastChangeRoutes, { prefix: '/api/link', handle })
  if (config.mode === 'cloud') {
    // The cloud's end of the link: a site server pushes, pulls and reports (ARCHITECTURE.md § Fleet link).
    await app.register(linkSyncRoutes, { prefix: '/api/link', link: createLinkService({ handle, clock, pullPollMs: config.link.pullPollMs }) })
  } else {
    // The site server's end: the agent runs while the server serves, for each enrolment (`sitegrid link enrol`).
    const agent = createLinkAgent({
      handle,
      clock,
      log,
      timing: { ...config.link, peerCheckMs: Math.max(config.link.pushIdleMs, 1000) },
      connect: (peer) => {
        const credential = unsealLinkCredential(keySecret, peer)
        return credential === undefined
          ? undefined
          : createLinkHttp({
              cloudUrl: peer.cloud_url,
              credential,
              env: config.link.proxyEnv,
              timeoutMs: config.link.timeoutMs,
              ...(config.link.ca ? { ca: config.link.ca } : {}),
            })
      },
      uploadBatch: (http, orgId, batch, signal) => uploadBatchSamples(http, handle.db, handle.dialect, orgId, batch, { signal }).then(() => undefined),
      afterPull: (orgId) => executePendingCommands({ handle, clock, alarms }, orgId).then(() => undefined),
    })
    await app.register(linkStatusRoutes, { prefix: '/api/link', handle, agent })
    app.addHook('onReady', async () => agent.start())
    app.addHook('onClose', async () => agent.stop())
  }

  app.addHook('onClose', async () => {
    await lastUsed.stop()
  })
  return app
}
